/* bench/svae/experiment.c - the SVAE paper's experiments as vs_svae_experiment (versus/experiment.h): Table 1
 * (reconstruction term R and test accuracy of SVAE over (alpha, beta) and M2 over alpha), the
 * invariance test of Fig. 2 (labels kept when z2 ~ N(0, sigma^2) is resampled, and the L2 distance
 * of the decoded samples to the originals), then the explanation figures (bench/svae/figures.c)
 * and the report. */
#include "bench/svae/svae_bench.h"
#include "versus/versus.h"
#include "versus/arch.h"
#include "versus/pairs.h"
#include "versus/ops.h"
#include "versus/train.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EPS_STREAM 0x696e766172ull /* "invar": seed ^ this draws the invariance test's noise */
#define BATCH 250

void vs_svae_experiment_opts_init(vs_svae_experiment_opts *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1, o->runs = 1, o->train_rows = 10000, o->epochs = 8, o->batch = 64, o->lr = 1e-3;
    o->hidden = 256, o->z1 = 10, o->z2 = 5;
    o->alpha[0] = 60, o->alpha[1] = 6000, o->beta[0] = 0.01, o->beta[1] = 0.9;
    o->unlabelled = 1;
    o->n_invariance = 1000, o->explain_class = 3, o->n_divergence = 200;
}

static void say(const vs_svae_experiment_opts *o, const char *fmt, ...)
{
    if (!o->progress) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(o->progress, fmt, ap);
    va_end(ap);
    fflush(o->progress);
}

/* Train one setting once (seed); metrics into run k of s, the model kept when keep. */
static vs_status train_setting(const vs_dataset *train, const vs_dataset *test, const vs_svae_experiment_opts *o, svae_setting *s,
                               int k, bool keep, vs_error *err)
{
    vs_rng r;
    vs_rng_seed(&r, (uint64_t)(o->seed + k));
    int64_t in[3] = {train->shape[0], train->shape[1], train->shape[2]};
    vs_module *m = s->svae ? vs_arch_svae_mlp(train->ndim, in, train->n_classes, o->hidden, o->z1, o->z2, &r, err)
                           : vs_arch_m2_mlp(train->ndim, in, train->n_classes, o->hidden, o->z2, &r, err);
    if (!m) return err->code;
    char opts[128];
    if (s->svae) snprintf(opts, sizeof opts, "alpha=%.17g,beta=%.17g", s->weight, s->beta);
    else snprintf(opts, sizeof opts, "alpha=%.17g,unlabelled=%.17g", s->weight, o->unlabelled);
    vs_train_opts t;
    vs_train_opts_init(&t);
    t.epochs = s->epochs, t.batch_size = o->batch, t.optim.lr = (float)o->lr, t.seed = (uint64_t)(o->seed + k);
    t.task_opts = opts, t.test = test;
    vs_train_result res = {0};
    vs_status st = vs_train(m, train, &t, &res, err);
    if (st == VS_OK) {
        s->acc[k] = vs_train_result_get(&res, "test_accuracy"), s->R[k] = vs_train_result_get(&res, "test_R");
        s->kl[k] = vs_train_result_get(&res, "test_kl"), s->seconds[k] = res.seconds;
        s->n_runs = k + 1;
        say(o, "  %-22s run %d: accuracy %.4f  R %.2f  KL %.2f  (%.0f s)\n", s->name, k + 1, s->acc[k], s->R[k], s->kl[k], res.seconds);
    }
    vs_train_result_clear(&res);
    if (st == VS_OK && keep) st = vs_svae_layout_of(m, &s->layout, err);
    if (st == VS_OK && keep) s->m = m;
    else vs_module_free(m);
    return st;
}

/* Labels kept and L2 distance to the original per sigma, over the first n test rows: encode x (means),
 * replace z2 by sigma eps (eps ~ N(0, I), the same draws for every model of the same k2), decode,
 * classify again. */
static vs_status invariance(svae_setting *s, const vs_dataset *test, int64_t n, const double *sigmas, int ns, uint64_t seed,
                            vs_error *err)
{
    double kept[SVAE_MAX_SIGMAS] = {0}, l2[SVAE_MAX_SIGMAS] = {0};
    vs_rng r;
    vs_rng_seed(&r, seed ^ EPS_STREAM);
    vs_status st = VS_OK;
    bool grad = vs_set_grad_enabled(false);
    for (int64_t i0 = 0; i0 < n && st == VS_OK; i0 += BATCH) {
        int64_t nb = n - i0 < BATCH ? n - i0 : BATCH, rows[BATCH], before[BATCH], after[BATCH];
        for (int64_t i = 0; i < nb; i++) rows[i] = i0 + i;
        vs_scope_begin();
        vs_tensor *x, *z1, *z2, *logits;
        st = vs_train_input(test, rows, nb, &x, NULL, &(vs_forward_ctx){0}, err);
        if (st == VS_OK) st = vs_svae_classify(s->m, x, &logits, err);
        if (st == VS_OK) st = vs_svae_encode(s->m, &s->layout, x, &z1, &z2, err);
        if (st == VS_OK) vs_argmax_rows(logits, before);
        for (int k = 0; k < ns && st == VS_OK; k++) {
            vs_tensor *eps = vs_tensor_randn(VS_SHAPE(nb, s->layout.k2), &r, 0, 1), *xt, *lt;
            st = vs_svae_decode(s->m, &s->layout, z1, vs_mul_scalar(eps, (float)sigmas[k]), &xt, err);
            if (st == VS_OK) st = vs_svae_classify(s->m, vs_reshape(xt, x->ndim, x->shape), &lt, err);
            if (st != VS_OK) break;
            vs_argmax_rows(lt, after);
            vs_tensor *d = vs_sqrt(vs_sum(vs_pow_scalar(vs_sub(vs_flatten(xt), vs_flatten(x)), 2), VS_AXIS(1), false));
            for (int64_t i = 0; i < nb; i++) kept[k] += before[i] == after[i], l2[k] += d->data[i];
        }
        vs_scope_end();
    }
    vs_set_grad_enabled(grad);
    for (int k = 0; k < ns; k++) s->kept[k] = kept[k] / (double)n, s->l2[k] = l2[k] / (double)n;
    return st;
}

/* "0.1,0.5" -> v[0..*n); false when not a list of 1..max numbers in (0, 100]. */
static bool parse_list(const char *text, double *v, int max, int *n)
{
    *n = 0;
    for (const char *p = text; *p;) {
        char *end;
        double x = strtod(p, &end);
        if (end == p || !(x > 0 && x <= 100) || *n == max) return false;
        v[(*n)++] = x;
        p = end;
        if (*p == ',') p++;
        else if (*p) return false;
    }
    return *n > 0;
}

static void mean_std(const double *v, int n, double *mean, double *sd)
{
    double s = 0, q = 0;
    for (int i = 0; i < n; i++) s += v[i];
    *mean = n ? s / n : NAN;
    for (int i = 0; i < n; i++) q += (v[i] - *mean) * (v[i] - *mean);
    *sd = n > 1 ? sqrt(q / (n - 1)) : NAN;
}

static vs_json *num(double v) { return isfinite(v) ? vs_json_new_number(v) : vs_json_new_null(); }

static vs_json *nums(const double *v, int n)
{
    vs_json *a = vs_json_new_array();
    for (int i = 0; a && i < n; i++)
        if (vs_json_push(a, num(v[i])) != VS_OK) {
            vs_json_free(a);
            return NULL;
        }
    return a;
}

/* results.json's data: settings, per model metrics (mean, std, runs), labels kept and diversity per sigma. */
static vs_json *data_json(const vs_svae_experiment_opts *o, const svae_setting *s, int n_set, const double *sigmas, int ns,
                          const svae_figures *f)
{
    vs_json *d = vs_json_new_object(), *models = vs_json_new_array(), *kept = vs_json_new_object(), *div = vs_json_new_object();
    bool ok = d && models && kept && div;
    ok = ok && vs_json_set(d, "format", vs_json_new_string("versus-bench-svae/1")) == VS_OK;
    ok = ok && vs_json_set(d, "data", vs_json_new_string(o->spec)) == VS_OK;
    ok = ok && vs_json_set(d, "command", o->command ? vs_json_new_string(o->command) : vs_json_new_null()) == VS_OK;
    ok = ok && vs_json_set(d, "commit", vs_json_new_string(vs_build_commit())) == VS_OK;
    vs_json *set = vs_json_new_object();
    ok = ok && set && vs_json_set(d, "settings", set) == VS_OK;
    const char *ikeys[] = {"seed", "runs", "train_rows", "epochs", "time_epochs", "batch", "hidden", "z1", "z2", "n_invariance", "n_divergence"};
    const int64_t ivals[] = {o->seed, o->runs, o->train_rows, o->epochs, o->time_epochs, o->batch, o->hidden, o->z1, o->z2,
                             o->n_invariance, o->n_divergence};
    for (int i = 0; ok && i < 11; i++) ok = vs_json_set(set, ikeys[i], vs_json_new_int(ivals[i])) == VS_OK;
    ok = ok && vs_json_set(set, "lr", num(o->lr)) == VS_OK && vs_json_set(set, "unlabelled", num(o->unlabelled)) == VS_OK;
    ok = ok && vs_json_set(set, "alpha_per", vs_json_new_string(o->alpha_per_example ? "example" : "batch")) == VS_OK;
    for (int i = 0; ok && i < n_set; i++) {
        vs_json *m = vs_json_new_object();
        double mean, sd;
        ok = m && vs_json_push(models, m) == VS_OK;
        ok = ok && vs_json_set(m, "name", vs_json_new_string(s[i].name)) == VS_OK;
        ok = ok && vs_json_set(m, "model", vs_json_new_string(s[i].svae ? "svae" : "m2")) == VS_OK;
        ok = ok && vs_json_set(m, "alpha", num(s[i].alpha)) == VS_OK && vs_json_set(m, "beta", num(s[i].beta)) == VS_OK;
        ok = ok && vs_json_set(m, "alpha_per_example", num(s[i].weight)) == VS_OK;
        ok = ok && vs_json_set(m, "epochs", vs_json_new_int(s[i].epochs)) == VS_OK;
        const char *keys[] = {"accuracy", "reconstruction", "kl", "seconds"};
        const double *vals[] = {s[i].acc, s[i].R, s[i].kl, s[i].seconds};
        for (int k = 0; ok && k < 4; k++) {
            char key[40];
            mean_std(vals[k], s[i].n_runs, &mean, &sd);
            snprintf(key, sizeof key, "%s_std", keys[k]);
            ok = vs_json_set(m, keys[k], num(mean)) == VS_OK && vs_json_set(m, key, num(sd)) == VS_OK;
            snprintf(key, sizeof key, "%s_runs", keys[k]);
            ok = ok && vs_json_set(m, key, nums(vals[k], s[i].n_runs)) == VS_OK;
        }
        ok = ok && vs_json_set(kept, s[i].name, nums(s[i].kept, ns)) == VS_OK && vs_json_set(div, s[i].name, nums(s[i].l2, ns)) == VS_OK;
    }
    ok = ok && vs_json_set(d, "models", models) == VS_OK;
    models = NULL;
    ok = ok && vs_json_set(d, "sigmas", nums(sigmas, ns)) == VS_OK;
    ok = ok && vs_json_set(d, "labels_kept", kept) == VS_OK;
    kept = NULL;
    ok = ok && vs_json_set(d, "diversity", div) == VS_OK;
    div = NULL;
    vs_json *e = vs_json_new_object();
    ok = ok && e && vs_json_set(d, "explanations", e) == VS_OK;
    ok = ok && vs_json_set(e, "test_row", vs_json_new_int(f->row)) == VS_OK && vs_json_set(e, "class", vs_json_new_int(f->label)) == VS_OK;
    ok = ok && vs_json_set(e, "grid_labels_kept", num(f->grid_kept)) == VS_OK;
    ok = ok && vs_json_set(e, "divergence_invariant", nums(f->d_inv, 2)) == VS_OK;
    ok = ok && vs_json_set(e, "divergence_counterfactual", nums(f->d_cf, 2)) == VS_OK;
    ok = ok && vs_json_set(e, "counterfactual_success_svae", num(f->cf_svae)) == VS_OK;
    ok = ok && vs_json_set(e, "counterfactual_success_m2", num(f->cf_m2)) == VS_OK;
    if (!ok) {
        vs_json_free(models);
        vs_json_free(kept);
        vs_json_free(div);
        vs_json_free(d);
        return NULL;
    }
    return d;
}

static void build_report(vs_report *r, const vs_svae_experiment_opts *o, int64_t n_train, const svae_setting *s, int n_set,
                         const double *sigmas, int ns, const svae_figures *f)
{
    vs_report_heading(r, 1, "SVAE: learning a classifier's invariances (%s)", o->spec);
    vs_report_paragraph(r,
                        "Trained on the first %lld rows of the training data.  Every network has one hidden layer of %lld units (encoders q(z|x,y), q(z|x) / q(y|x), decoder); SVAE's latent "
                        "has z1 = %lld classifier dims and z2 = %lld nuisance dims, M2's z has %lld dims.  Adam lr %g, batch %lld, "
                        "%lld epochs for every model (equal epochs), %lld run(s) per setting (seed %lld + run).  "
                        "M2 is trained with Eq. 8 as written (unlabelled weight %g).",
                        (long long)n_train, (long long)o->hidden, (long long)o->z1, (long long)o->z2, (long long)o->z2, o->lr, (long long)o->batch,
                        (long long)o->epochs, (long long)o->runs, (long long)o->seed, o->unlabelled);
    if (o->time_epochs > 0)
        vs_report_paragraph(r, "Equal time: the SVAE grid is trained again for %lld epochs (rows marked %lldep), about M2's training time "
                               "at %lld epochs, since M2's Eq. 8 decodes x once per class (C + 1 decodes per step against the SVAE's one); "
                               "the train s column holds the measured times.",
                            (long long)o->time_epochs, (long long)o->time_epochs, (long long)o->epochs);
    if (o->alpha_per_example) vs_report_paragraph(r, "alpha is the classifier's weight per example.");
    else
        vs_report_paragraph(r, "alpha weights the batch mean of the classifier's cross-entropy against the batch sum of the ELBO terms (the "
                               "paper does not say; PyTorch's default reductions), so an example's classifier weight is alpha / %lld (the "
                               "column per ex.).",
                            (long long)o->batch);
    if (o->command) vs_report_paragraph(r, "Command: `%s`, commit `%s`", o->command, vs_build_commit());

    vs_report_heading(r, 2, "Table 1: reconstruction term and test accuracy");
    const char *hdr[] = {"model", "alpha", "per ex.", "beta", "epochs", "R (nats)", "accuracy (%)", "KL (nats)", "train s"};
    const vs_better better[] = {VS_BETTER_NONE, VS_BETTER_NONE,   VS_BETTER_NONE,   VS_BETTER_NONE, VS_BETTER_NONE,
                                VS_BETTER_HIGHER, VS_BETTER_HIGHER, VS_BETTER_NONE, VS_BETTER_NONE};
    vs_report_table *t = vs_report_table_new(r, "R = E log p(x|z) per test image with z ~ q(z|x,y) for the true y; accuracy of "
                                                "f(x) = p(y | mean of q(z1|x)) (SVAE) or q(y|x) (M2); mean (std over runs).",
                                             9, hdr, better);
    for (int i = 0; t && i < n_set; i++) {
        int row = vs_report_table_row(t);
        double m, sd;
        vs_report_text(t, row, 0, s[i].svae ? "SVAE" : "M2");
        vs_report_number(t, row, 1, s[i].alpha, NAN, 0);
        vs_report_number(t, row, 2, s[i].weight, NAN, 3);
        if (s[i].svae) vs_report_number(t, row, 3, s[i].beta, NAN, 2);
        else vs_report_missing(t, row, 3, "M2 has no beta");
        vs_report_number(t, row, 4, (double)s[i].epochs, NAN, 0);
        mean_std(s[i].R, s[i].n_runs, &m, &sd);
        vs_report_number(t, row, 5, m, sd, 2);
        double pct[SVAE_MAX_RUNS];
        for (int k = 0; k < s[i].n_runs; k++) pct[k] = 100 * s[i].acc[k];
        mean_std(pct, s[i].n_runs, &m, &sd);
        vs_report_number(t, row, 6, m, sd, 2);
        mean_std(s[i].kl, s[i].n_runs, &m, &sd);
        vs_report_number(t, row, 7, m, sd, 2);
        mean_std(s[i].seconds, s[i].n_runs, &m, &sd);
        vs_report_number(t, row, 8, m, NAN, 0);
    }
    if (t) vs_report_rank(t, 5, NULL), vs_report_rank(t, 6, NULL);

    vs_report_heading(r, 2, "Fig. 2: invariance test");
    vs_report_paragraph(r, "The first %lld test images are encoded (means), z2 (M2: z) is replaced by sigma eps with eps ~ N(0, I) "
                           "(the same draws for every model), the result is decoded and classified again.",
                        (long long)o->n_invariance);
    const char *khdr[SVAE_MAX_SIGMAS + 1];
    char labels[SVAE_MAX_SIGMAS][24];
    vs_better kb[SVAE_MAX_SIGMAS + 1];
    khdr[0] = "model", kb[0] = VS_BETTER_NONE;
    for (int k = 0; k < ns; k++) snprintf(labels[k], sizeof labels[k], "s=%g", sigmas[k]), khdr[k + 1] = labels[k], kb[k + 1] = VS_BETTER_HIGHER;
    vs_report_table *kt = vs_report_table_new(r, "Labels kept (%) per sigma.", ns + 1, khdr, kb);
    for (int k = 0; k <= ns; k++) kb[k] = VS_BETTER_NONE;
    vs_report_table *lt = vs_report_table_new(r, "Mean L2 distance between the original and the decoded image per sigma (diversity).", ns + 1,
                                              khdr, kb);
    vs_report_figure *fk = vs_report_figure_new(r, VS_FIGURE_LINE, "labels_kept", "Invariance test (Fig. 2)", "sigma", "labels kept (%)",
                                                "Share of test images whose predicted label survives resampling the nuisance latent.");
    vs_report_figure *fd = vs_report_figure_new(r, VS_FIGURE_LINE, "diversity", "Diversity of the invariant samples", "sigma",
                                                "mean L2 to the original", "L2 distance between each test image and its resampled decode.");
    float xs[SVAE_MAX_SIGMAS], ys[SVAE_MAX_SIGMAS], ls[SVAE_MAX_SIGMAS];
    for (int k = 0; k < ns; k++) xs[k] = (float)sigmas[k];
    for (int i = 0; i < n_set; i++) {
        int a = kt ? vs_report_table_row(kt) : -1, b = lt ? vs_report_table_row(lt) : -1;
        if (kt) vs_report_text(kt, a, 0, s[i].name);
        if (lt) vs_report_text(lt, b, 0, s[i].name);
        for (int k = 0; k < ns; k++) {
            if (kt) vs_report_number(kt, a, k + 1, 100 * s[i].kept[k], NAN, 1);
            if (lt) vs_report_number(lt, b, k + 1, s[i].l2[k], NAN, 2);
            ys[k] = (float)(100 * s[i].kept[k]), ls[k] = (float)s[i].l2[k];
        }
        if (fk) vs_report_series(fk, s[i].name, (size_t)ns, xs, ys, NULL);
        if (fd) vs_report_series(fd, s[i].name, (size_t)ns, xs, ls, NULL);
    }

    vs_report_heading(r, 2, "Figs. 3-7: interpreting the SVAE with alpha %g, beta %g", o->alpha[1], o->beta[1]);
    vs_report_paragraph(r, "Explained: test image %lld (class %lld), the first correctly classified one of class %lld.", (long long)f->row,
                        (long long)f->label, (long long)o->explain_class);
    vs_report_item(r, "Fig. 3: a 7 x 7 grid crossing nuisance dims %d and %d (step 0.75 around the encoding); %.0f%% of the grid keeps "
                      "the label.",
                   f->grid_dims[0], f->grid_dims[1], 100 * f->grid_kept);
    vs_report_item(r, "Latent divergence d(x, x~) = KL(q(z_k|x) || q(z_k|x~)) (Eq. 9), mean over the first %lld test images: invariant "
                      "samples (z2 ~ N(0, 1), label kept) k = 1: %.3f, k = 2: %.3f; counterfactuals (z1 moved to another class's "
                      "centroid) k = 1: %.3f, k = 2: %.3f.",
                   (long long)f->n_div, f->d_inv[0], f->d_inv[1], f->d_cf[0], f->d_cf[1]);
    vs_report_item(r, "Counterfactuals (Fig. 7): decoded into the target class for %.1f%% of (image, target) pairs with the SVAE "
                      "(z1 set to the target's centroid of q(z1|x) means over training images, z2 kept) and %.1f%% with M2 (y set).",
                   100 * f->cf_svae, 100 * f->cf_m2);
    const char *dh[] = {"method", "classifier", "Eq. 9, k = 1", "Eq. 9, k = 2"};
    vs_report_table *dt = vs_report_table_new(r, "Largest |completeness gap| of the attributions in Figs. 4-6 (sum of the attribution "
                                                 "minus the score difference to the baseline; saliency makes no such claim).",
                                              4, dh, NULL);
    for (int i = 0; dt && i < f->n_methods; i++) {
        int row = vs_report_table_row(dt);
        vs_report_text(dt, row, 0, f->methods[i]);
        for (int k = 0; k < 3; k++) {
            if (isfinite(f->delta[i][k])) vs_report_number(dt, row, k + 1, f->delta[i][k], NAN, -2);
            else vs_report_missing(dt, row, k + 1, "not a completeness method");
        }
    }
    for (int i = 0; i < f->n_files; i++) vs_report_item(r, "`%s`", f->files[i]);
}

static vs_status run(const vs_dataset *train, const vs_dataset *test, const vs_svae_experiment_opts *o, vs_report **out, vs_error *err);

vs_status vs_svae_experiment(const vs_dataset *train, const vs_dataset *test, const vs_svae_experiment_opts *o, vs_report **out,
                             vs_error *err)
{
    *out = NULL;
    if (o->train_rows < 0) return vs_error_set(err, VS_ERR_ARG, "svae experiment: train_rows must be >= 0");
    if (o->train_rows == 0 || train->n <= o->train_rows) return run(train, test, o, out, err);
    int64_t *idx = malloc((size_t)o->train_rows * sizeof *idx);
    vs_dataset *sub = NULL;
    if (!idx) return vs_error_set(err, VS_ERR_NOMEM, "svae experiment: out of memory");
    for (int64_t i = 0; i < o->train_rows; i++) idx[i] = i;
    vs_status st = vs_dataset_subset(train, idx, o->train_rows, &sub, err);
    free(idx);
    if (st == VS_OK) st = run(sub, test, o, out, err);
    vs_dataset_free(sub);
    return st;
}

static vs_status run(const vs_dataset *train, const vs_dataset *test, const vs_svae_experiment_opts *o, vs_report **out, vs_error *err)
{
    if (!o->spec) return vs_error_set(err, VS_ERR_ARG, "svae experiment: the data set name is required");
    if (train->kind != VS_DATA_IMAGES || test->kind != VS_DATA_IMAGES)
        return vs_error_set(err, VS_ERR_ARG, "svae experiment: needs images (mnist, fashion-mnist, ...); %s holds other data", o->spec);
    if (o->runs < 1 || o->runs > SVAE_MAX_RUNS) return vs_error_set(err, VS_ERR_ARG, "svae experiment: runs must be in [1, %d]", SVAE_MAX_RUNS);
    if (o->epochs < 0 || o->time_epochs < 0 || o->hidden < 1 || o->z1 < 1 || o->z2 < 2 || o->n_invariance < 1 || o->n_divergence < 1)
        return vs_error_set(err, VS_ERR_ARG, "svae experiment: epochs >= 0, hidden >= 1, z1 >= 1, z2 >= 2 and the test counts >= 1");
    double sigmas[SVAE_MAX_SIGMAS];
    int ns;
    if (!parse_list(o->sigmas ? o->sigmas : "0.1,0.25,0.5,1,1.5,2,3,4,5", sigmas, SVAE_MAX_SIGMAS, &ns))
        return vs_error_set(err, VS_ERR_ARG, "svae experiment: sigmas must be 1 to %d comma-separated numbers in (0, 100]", SVAE_MAX_SIGMAS);
    double weight[2]; /* the tasks' alpha: per example */
    for (int a = 0; a < 2; a++) weight[a] = o->alpha_per_example ? o->alpha[a] : o->alpha[a] / (double)o->batch;
    /* the SVAE grid at equal epochs, [at equal time,] M2 */
    svae_setting s[10];
    memset(s, 0, sizeof s);
    int n_set = 0;
    for (int e = 0; e < (o->time_epochs > 0 ? 2 : 1); e++)
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++, n_set++) {
                s[n_set].svae = true, s[n_set].alpha = o->alpha[a], s[n_set].weight = weight[a], s[n_set].beta = o->beta[b];
                s[n_set].epochs = e ? o->time_epochs : o->epochs;
                snprintf(s[n_set].name, sizeof s[n_set].name, e ? "SVAE a=%g b=%g %lldep" : "SVAE a=%g b=%g", o->alpha[a], o->beta[b],
                         (long long)o->time_epochs);
            }
    for (int a = 0; a < 2; a++, n_set++) {
        s[n_set].svae = false, s[n_set].alpha = o->alpha[a], s[n_set].weight = weight[a], s[n_set].beta = NAN, s[n_set].epochs = o->epochs;
        snprintf(s[n_set].name, sizeof s[n_set].name, "M2 a=%g", o->alpha[a]);
    }
    int64_t n_inv = o->n_invariance < test->n ? o->n_invariance : test->n;
    vs_status st = VS_OK;
    say(o, "svae: training %d settings x %lld run(s) on %s (%lld rows, test %lld)\n", n_set, (long long)o->runs, o->spec,
        (long long)train->n, (long long)test->n);
    for (int k = 0; k < o->runs && st == VS_OK; k++)
        for (int i = 0; i < n_set && st == VS_OK; i++) st = train_setting(train, test, o, &s[i], k, k == 0, err);
    say(o, "svae: invariance test on %lld test images\n", (long long)n_inv);
    for (int i = 0; i < n_set && st == VS_OK; i++) st = invariance(&s[i], test, n_inv, sigmas, ns, (uint64_t)o->seed, err);
    svae_figures f;
    memset(&f, 0, sizeof f);
    say(o, "svae: explanations (Figs. 3-7)\n"); /* by SVAE (alpha2, beta2) at equal epochs and M2 alpha2 */
    if (st == VS_OK) st = vs_svae_figures_run(train, test, &s[3], &s[n_set - 1], o, &f, err);
    vs_report *r = st == VS_OK ? vs_report_new() : NULL;
    if (st == VS_OK && !r) st = vs_error_set(err, VS_ERR_NOMEM, "svae experiment: out of memory");
    if (st == VS_OK) {
        build_report(r, o, train->n, s, n_set, sigmas, ns, &f);
        vs_json *d = data_json(o, s, n_set, sigmas, ns, &f);
        if (!d) st = vs_error_set(err, VS_ERR_NOMEM, "svae experiment: out of memory");
        else vs_report_set_data(r, d);
    }
    for (int i = 0; i < n_set; i++) vs_module_free(s[i].m);
    if (st != VS_OK) {
        vs_report_free(r);
        return st;
    }
    *out = r;
    return VS_OK;
}
