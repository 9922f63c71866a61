/* explain_svae.c - `versus explain svae`: one image explained by a trained SVAE (or M2): invariant
 * samples, attributions of the latent divergence d(x, x~) = KL(q(z_k|x) || q(z_k|x~)) at each of them
 * (Eq. 9, k = 1 and 2), and one counterfactual per class; .npy files in OUT and a summary on stdout. */
#include "cli/cli.h"
#include "versus/versus.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const vs_cli_opt svae_opts[] = {
    VS_DATA_CLI_OPTS,
    {"model", 1, "model directory trained by the svae or m2 task (versus train --arch svae|m2)"},
    {"input", 1, "images X.npy [N, c, h, w] (or one image [c, h, w])"},
    {"row", 1, "the row of X explained (default 0)"},
    {"samples", 1, "invariant samples (default 3)"},
    {"sigma", 1, "standard deviation of the resampled nuisance latent z2 (default 1)"},
    {"method", 1, "attribution method of the registry for Eq. 9 (default expected_gradients = GradientSHAP)"},
    {"data", 1, "SVAE counterfactuals: training SPEC whose class means of z1 are the targets (M2 needs none)"},
    {"out", 1, "output directory"},
    {NULL, 0, NULL},
};

#define MAX_DRAWS 200

/* The chosen row of X.npy as [1, ...] in the model's example shape; NULL after a message. */
static vs_tensor *input_row(const char *path, int64_t row, const vs_svae_layout *l, int *rc)
{
    vs_tensor *x = NULL;
    vs_error err;
    *rc = 1;
    if (vs_npy_read_finite(path, &x, &err) != VS_OK) {
        vs_fail("%s", err.msg);
        return NULL;
    }
    int64_t dim = 1, n;
    for (int i = 0; i < l->ndim; i++) dim *= l->shape[i];
    bool one = x->ndim == l->ndim;
    n = one ? 1 : x->shape[0];
    bool ok = (one || x->ndim == l->ndim + 1) && x->size == n * dim;
    for (int i = 0; ok && i < l->ndim; i++) ok = x->shape[x->ndim - l->ndim + i] == l->shape[i];
    vs_tensor *r = NULL;
    if (!ok) vs_fail("%s: expected images [N, %lld, %lld, %lld] for this model", path, (long long)l->shape[0], (long long)l->shape[1],
                     (long long)l->shape[2]);
    else if (row < 0 || row >= n) vs_fail("--row %lld: %s holds %lld images", (long long)row, path, (long long)n);
    else if ((r = vs_tensor_new(l->ndim + 1, (int64_t[]){1, l->shape[0], l->shape[1], l->shape[2]})))
        memcpy(r->data, x->data + row * dim, (size_t)dim * sizeof *r->data), *rc = 0;
    vs_tensor_free(x);
    return r;
}

static int save(const char *out, const char *name, const vs_tensor *t)
{
    char path[4096];
    vs_error err;
    snprintf(path, sizeof path, "%s/%s", out, name);
    if (vs_npy_write(path, t, &err) != VS_OK) return vs_fail("%s", err.msg);
    printf("wrote %s\n", path);
    return 0;
}

/* Eq. 9 for part k at every sample xt (baseline x): the divergences and the attributions. */
static int divergence(vs_module *m, const vs_svae_layout *l, vs_tensor *x, vs_tensor *xt, int part, const vs_method *method, uint64_t seed,
                      const char *out)
{
    vs_svae_divergence d;
    vs_error err;
    if (vs_svae_divergence_init(&d, m, l, x, part, &err) != VS_OK) return vs_fail("%s", err.msg);
    vs_model_fn fn = vs_svae_divergence_fn(&d);
    vs_explain_request q;
    vs_explain_request_init(&q);
    q.target = 0, q.baseline = x, q.baselines = x, q.seed = seed;
    vs_tensor *a = NULL, *dv = fn.forward(fn.ctx, xt);
    int rc = dv ? 0 : vs_fail("%s", vs_last_error()->msg);
    if (rc == 0 && vs_explain(&fn, xt, method, NULL, &q, &a, NULL, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    if (rc == 0) {
        printf("d(x, x~) = KL(q(z%d|x) || q(z%d|x~)):", part, part);
        for (int64_t i = 0; i < dv->size; i++) printf(" %.4g", (double)dv->data[i]);
        printf("\n");
        rc = save(out, part == 1 ? "divergence_z1.npy" : "divergence_z2.npy", a);
    }
    vs_svae_divergence_clear(&d);
    return rc;
}

static int run(const vs_args *a, const char *out)
{
    vs_error err;
    const char *dir = vs_args_get(a, "model"), *mname = vs_args_get(a, "method"), *spec = vs_args_get(a, "data");
    const vs_method *method = vs_method_find(mname ? mname : "expected_gradients");
    if (!method || method->output != VS_OUTPUT_FEATURES)
        return vs_usage_error("explain", "--method: '%s' is not an attribution method (see versus help attribute)", mname);
    int64_t row, samples, seed;
    double sigma;
    int rc;
    if ((rc = vs_args_int(a, "row", 0, 0, INT64_MAX, &row)) || (rc = vs_args_int(a, "samples", 3, 1, MAX_DRAWS, &samples)) ||
        (rc = vs_args_float(a, "sigma", 1, 1e-6, 100, &sigma)) || (rc = vs_args_int(a, "seed", 1, 0, INT64_MAX, &seed)))
        return rc;
    vs_module *m = vs_model_load(dir, NULL, &err);
    if (!m) return vs_fail("%s", err.msg);
    vs_svae_layout l;
    vs_dataset *d = NULL;
    vs_tensor *x = NULL;
    if (vs_svae_layout_of(m, &l, &err) != VS_OK) rc = vs_fail("%s: %s", dir, err.msg);
    else x = input_row(vs_args_get(a, "input"), row, &l, &rc);
    vs_data_flags df;
    if (rc == 0 && spec && (rc = vs_cli_data_flags(a, &df)) == 0 && vs_load_spec(spec, &df, &d, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    vs_scope_begin();
    vs_tensor *logits, *xt = NULL, *targets, *cf;
    int64_t label = -1, got = 0;
    vs_rng r;
    vs_rng_seed(&r, (uint64_t)seed);
    if (rc == 0 && vs_svae_classify(m, x, &logits, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    if (rc == 0) vs_argmax_rows(logits, &label), printf("predicted class %lld (%s)\n", (long long)label, l.kind == VS_SVAE_SVAE ? "svae" : "m2");
    if (rc == 0 && vs_svae_invariant(m, &l, x, label, sigma, samples, MAX_DRAWS, &r, &xt, &got, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    if (rc == 0 && got == 0) rc = vs_fail("none of %d invariant draws with sigma %g keeps class %lld", MAX_DRAWS, sigma, (long long)label);
    if (rc == 0) printf("%lld invariant samples (z2 ~ N(0, %g^2), class kept)\n", (long long)got, sigma), rc = save(out, "invariant.npy", xt);
    for (int part = 1; rc == 0 && part <= 2 && l.kind == VS_SVAE_SVAE; part++) rc = divergence(m, &l, x, xt, part, method, (uint64_t)seed, out);
    if (rc == 0 && l.kind == VS_SVAE_M2) printf("(Eq. 9 needs an SVAE: M2's z1 is a label)\n");
    if (rc == 0 && l.n_classes > 4096) rc = vs_fail("%s: more than 4096 classes", dir);
    if (rc == 0 && (l.kind == VS_SVAE_M2 || d)) {
        int64_t pred[4096];
        if (vs_svae_class_targets(m, &l, d, 10000, &targets, &err) != VS_OK || vs_svae_counterfactuals(m, &l, x, targets, &cf, &err) != VS_OK ||
            vs_svae_classify(m, cf, &logits, &err) != VS_OK)
            rc = vs_fail("%s", err.msg);
        if (rc == 0) {
            vs_argmax_rows(logits, pred);
            printf("counterfactuals (target: predicted):");
            for (int64_t t = 0; t < l.n_classes; t++) printf(" %lld:%lld", (long long)t, (long long)pred[t]);
            printf("\n");
            rc = save(out, "counterfactuals.npy", cf);
        }
    }
    vs_scope_end();
    vs_tensor_free(x);
    vs_dataset_free(d);
    vs_module_free(m);
    return rc;
}

int vs_explain_svae(int argc, char **argv)
{
    vs_args a;
    int rc = vs_args_parse("explain", svae_opts, argc - 1, argv + 1, &a);
    if (rc) return rc;
    if (a.n_pos > 0) return vs_usage_error("explain", "unexpected argument '%s'", a.pos[0]);
    const char *out = vs_args_get(&a, "out");
    if (!vs_args_get(&a, "model") || !vs_args_get(&a, "input") || !out)
        return vs_usage_error("explain", "svae needs --model DIR --input X.npy --out DIR");
    if (mkdir(out, 0777) != 0 && errno != EEXIST) return vs_fail("%s: cannot create directory: %s", out, strerror(errno));
    return run(&a, out);
}
