/* task_vae.c - the VAE task (Kingma & Welling) with a Bernoulli decoder, beta and the DIP-VAE
 * penalties of Kumar et al. (2018).  The model is a composite with input "x", outputs "mu",
 * "logvar" [n,k] and "x_logits" (x's size), and the sample "z" (versus/composite.h):
 *   recon = sum over the pixels of BCE(sigmoid(x_logits), x), mean over the batch
 *   kl    = sum_j KL(N(mu_j, e^logvar_j) || N(0, 1)), mean over the batch
 *   C     = Cov_batch[mu] (DIP-VAE-i), or Cov_batch[mu] + mean_batch diag(e^logvar) (DIP-VAE-ii)
 *   dip   = lambda_od sum_{i != j} C_ij^2 + lambda_d sum_i (C_ii - 1)^2
 *   loss  = recon + beta kl + dip
 * Evaluation: test_elbo = -(recon + kl) per test example in nats, one z sample per example drawn
 * from a generator seeded from the run's seed (so the figure is reproducible), and its two parts. */
#include "nn/train_internal.h"
#include "versus/composite.h"
#include "versus/ops.h"

#include <math.h>
#include <stdlib.h>

#define EVAL_STREAM 0x76616576616cull /* "vaeval": seed ^ this draws the evaluation's z */
#define GRID 8                        /* sample grids are GRID x GRID images */

enum { OPT_BETA, OPT_DIP, OPT_LAMBDA_OD, OPT_LAMBDA_D };
enum { DIP_NONE, DIP_I, DIP_II };

static const char *const dip_choices[] = {"none", "i", "ii", NULL};
static const vs_task_opt_def vae_opts[] = {
    {"beta", 1, 0, 1e6, NULL, "weight of the KL term (beta-VAE)"},
    {"dip", DIP_NONE, 0, 2, dip_choices, "DIP-VAE penalty: none, i (Cov[mu]) or ii (Cov[mu] + E[diag e^logvar])"},
    {"lambda_od", 10, 0, 1e9, NULL, "DIP-VAE weight of the off-diagonal covariances"},
    {"lambda_d", 100, 0, 1e9, NULL, "DIP-VAE weight of the diagonal's distance from 1"},
    {NULL, 0, 0, 0, NULL, NULL},
};

static const char *const vae_terms[] = {"loss", "recon", "kl", "dip", NULL};
static const char *const vae_outputs[] = {"mu", "logvar", "x_logits"};
static const char *const x_name[] = {"x"};

static vs_status vae_init(vs_task_run *r, vs_error *err)
{
    vs_module *m = r->model;
    if (m->kind != VS_MODULE_COMPOSITE)
        return vs_error_set(err, VS_ERR_ARG, "the vae task needs a composite model, not a %s", vs_module_kind_name(m->kind));
    for (int i = 0; i < 3; i++)
        if (!vs_composite_defines(m, vae_outputs[i]))
            return vs_error_set(err, VS_ERR_ARG, "the vae task needs a model that computes \"%s\" (and \"mu\", \"logvar\", \"x_logits\" from \"x\")",
                                vae_outputs[i]);
    if (!vs_composite_defines(m, "x")) return vs_error_set(err, VS_ERR_ARG, "the vae task needs a model with input \"x\"");
    if (r->data->kind == VS_DATA_GRAPHS) return vs_error_set(err, VS_ERR_ARG, "the vae task trains on images or rows, not graphs");
    return VS_OK;
}

typedef struct vae_parts {
    vs_tensor *recon, *kl, *mu, *logvar, *logits;
} vae_parts;

/* recon and kl of rows[0..n) of d (batch means), z drawn from rng (NULL: z = mu). */
static vs_status vae_forward(vs_module *m, const vs_dataset *d, const int64_t *rows, int64_t n, vs_rng *rng, vae_parts *p,
                             vs_error *err)
{
    vs_tensor *x, *outs[3];
    vs_status st = vs_train_input(d, rows, n, &x, NULL, &(vs_forward_ctx){0}, err);
    if (st == VS_OK) st = vs_module_eval(m, 1, x_name, &x, 3, vae_outputs, outs, rng, err);
    if (st != VS_OK) return st;
    p->mu = outs[0], p->logvar = outs[1], p->logits = outs[2];
    if (p->logits->size != x->size || p->mu->ndim != 2 || !vs_same_shape(p->mu, p->logvar)) {
        char a[64], b[64], c[64];
        vs_shape_str(p->mu, a, sizeof a);
        vs_shape_str(p->logvar, b, sizeof b);
        vs_shape_str(p->logits, c, sizeof c);
        return vs_error_set(err, VS_ERR_SHAPE, "vae: mu %s, logvar %s and x_logits %s do not fit %lld examples of %lld values", a, b, c,
                            (long long)n, (long long)d->dim);
    }
    vs_tensor *target = vs_reshape(x, p->logits->ndim, p->logits->shape);
    p->recon = vs_mul_scalar(vs_bce_with_logits(p->logits, target), (float)d->dim);
    p->kl = vs_kl_diag_gaussian(p->mu, p->logvar, NULL, NULL);
    if (!p->recon || !p->kl) return vs_error_set(err, vs_last_error()->code, "vae: %s", vs_last_error()->msg);
    return VS_OK;
}

vs_tensor *vs_train_dip_penalty(vs_tensor *mu, vs_tensor *logvar, bool ii, double lambda_od, double lambda_d)
{
    int64_t n = mu->shape[0], k = mu->shape[1];
    vs_tensor *centred = vs_sub(mu, vs_mean(mu, VS_AXIS(0), true));
    vs_tensor *cov = vs_mul_scalar(vs_matmul_t(centred, true, centred, false), 1.0f / (float)n);
    vs_tensor *eye = vs_tensor_zeros(VS_SHAPE(k, k));
    for (int64_t i = 0; eye && i < k; i++) eye->data[i * k + i] = 1;
    if (ii) cov = vs_add(cov, vs_mul(eye, vs_mean(vs_exp(logvar), VS_AXIS(0), false)));
    vs_tensor *off = vs_mul(cov, vs_add_scalar(vs_neg(eye), 1));
    vs_tensor *diag = vs_sub(vs_mul(cov, eye), eye);
    return vs_add(vs_mul_scalar(vs_sum(vs_mul(off, off), VS_ALL_AXES, false), (float)lambda_od),
                  vs_mul_scalar(vs_sum(vs_mul(diag, diag), VS_ALL_AXES, false), (float)lambda_d));
}

static vs_status vae_step(vs_task_run *r, const int64_t *rows, int64_t n, double *terms, vs_error *err)
{
    vae_parts p;
    vs_status st = vae_forward(r->model, r->data, rows, n, r->forward, &p, err);
    if (st != VS_OK) return st;
    vs_tensor *loss = vs_add(p.recon, vs_mul_scalar(p.kl, (float)r->opt[OPT_BETA]));
    vs_tensor *dip = NULL;
    if ((int)r->opt[OPT_DIP] != DIP_NONE) {
        dip = vs_train_dip_penalty(p.mu, p.logvar, (int)r->opt[OPT_DIP] == DIP_II, r->opt[OPT_LAMBDA_OD], r->opt[OPT_LAMBDA_D]);
        loss = vs_add(loss, dip);
    }
    terms[1] = vs_item(p.recon), terms[2] = vs_item(p.kl), terms[3] = dip ? vs_item(dip) : 0;
    if (loss) terms[0] = vs_item(loss);
    return vs_task_update(r, "model", loss, err);
}

/* Sums of recon and kl over rows[0..n) of d, VS_TRAIN_EVAL_BATCH at a time. */
static vs_status vae_totals(vs_module *m, const vs_dataset *d, const int64_t *rows, int64_t n, vs_rng *rng, double *recon, double *kl,
                            vs_error *err)
{
    *recon = *kl = 0;
    vs_status st = VS_OK;
    for (int64_t i0 = 0; i0 < n && st == VS_OK; i0 += VS_TRAIN_EVAL_BATCH) {
        int64_t nb = n - i0 < VS_TRAIN_EVAL_BATCH ? n - i0 : VS_TRAIN_EVAL_BATCH;
        vs_scope_begin();
        vae_parts p;
        st = vae_forward(m, d, rows + i0, nb, rng, &p, err);
        if (st == VS_OK) *recon += (double)vs_item(p.recon) * (double)nb, *kl += (double)vs_item(p.kl) * (double)nb;
        vs_scope_end();
    }
    return st;
}

static vs_status vae_evaluate(vs_task_run *r, vs_train_result *res, vs_error *err)
{
    const vs_train_split *s = r->split;
    vs_rng rng;
    vs_rng_seed(&rng, r->opts->seed ^ EVAL_STREAM);
    double recon, kl;
    res->n_train = s->n_train, res->n_test = s->n_test;
    vs_status st = vae_totals(r->model, r->test, s->test, s->n_test, &rng, &recon, &kl, err);
    if (st == VS_OK && s->n_test > 0) {
        double n = (double)s->n_test;
        vs_train_result_put(res, "test_elbo", -(recon + kl) / n);
        vs_train_result_put(res, "test_recon", recon / n);
        vs_train_result_put(res, "test_kl", kl / n);
    }
    return st;
}

/* GRID/2 rows of decoded prior samples, then test images and their reconstructions (z = mu) in
 * alternate rows. */
static vs_status vae_sample(vs_task_run *r, vs_rng *rng, vs_tensor **out, int *rows, int *cols, vs_error *err)
{
    const vs_dataset *d = r->test;
    if (d->kind != VS_DATA_IMAGES) return vs_error_set(err, VS_ERR_ARG, "samples: the vae task draws grids of images; %s holds rows", d->name);
    int64_t n_src = GRID * GRID / 4, idx[GRID * GRID / 4];
    const vs_train_split *s = r->split;
    int64_t pool = s->n_test > 0 ? s->n_test : s->n_train;
    const int64_t *from = s->n_test > 0 ? s->test : s->train;
    for (int64_t i = 0; i < n_src; i++) idx[i] = from[i % pool];
    vae_parts p;
    vs_status st = vae_forward(r->model, s->n_test > 0 ? d : r->data, idx, n_src, NULL, &p, err);
    if (st != VS_OK) return st;
    vs_tensor *z = vs_tensor_randn(VS_SHAPE(GRID * GRID / 2, p.mu->shape[1]), rng, 0, 1), *prior;
    const char *z_name = "z", *logits_name = "x_logits";
    if ((st = vs_module_eval(r->model, 1, &z_name, &z, 1, &logits_name, &prior, NULL, err)) != VS_OK) return st;
    vs_tensor *x;
    if ((st = vs_train_input(s->n_test > 0 ? d : r->data, idx, n_src, &x, NULL, &(vs_forward_ctx){0}, err)) != VS_OK) return st;
    int64_t img[4] = {0, d->shape[0], d->shape[1], d->shape[2]};
    img[0] = GRID * GRID / 2;
    vs_tensor *parts[1 + GRID / 2];
    parts[0] = vs_reshape(vs_sigmoid(prior), 4, img);
    img[0] = GRID;
    vs_tensor *rec = vs_sigmoid(vs_reshape(p.logits, 4, (int64_t[]){n_src, d->shape[0], d->shape[1], d->shape[2]}));
    for (int k = 0; k < GRID / 4; k++) {
        parts[1 + 2 * k] = vs_slice(x, 0, k * GRID, (k + 1) * GRID);
        parts[2 + 2 * k] = vs_slice(rec, 0, k * GRID, (k + 1) * GRID);
    }
    *out = vs_concat(1 + GRID / 2, parts, 0);
    *rows = GRID, *cols = GRID;
    return *out ? VS_OK : vs_error_set(err, vs_last_error()->code, "samples: %s", vs_last_error()->msg);
}

/* Reconstructions sigmoid(decoder(mu)) of x, in x's shape. */
static vs_status vae_predict(vs_module *m, const double *opt, vs_tensor *x, int64_t cls, vs_tensor **y, vs_error *err)
{
    (void)opt;
    if (cls >= 0) return vs_error_set(err, VS_ERR_ARG, "a VAE reconstructs its input; --class applies to conditional generators");
    const char *want = "x_logits";
    vs_tensor *logits;
    vs_status st = vs_module_eval(m, 1, x_name, &x, 1, &want, &logits, NULL, err);
    if (st != VS_OK) return st;
    if (logits->size != x->size) return vs_error_set(err, VS_ERR_SHAPE, "vae: x_logits has %lld values for %lld inputs", (long long)logits->size, (long long)x->size);
    *y = vs_reshape(vs_sigmoid(logits), x->ndim, x->shape);
    return *y ? VS_OK : vs_error_set(err, vs_last_error()->code, "%s", vs_last_error()->msg);
}

const vs_task vs_task_vae = {
    .name = "vae",
    .help = "vae: a composite x -> mu, logvar, x_logits (Bernoulli decoder); loss = recon + beta KL [+ DIP-VAE\n"
            "    penalty]; reports test_elbo (nats per test example), test_recon, test_kl.",
    .optims = vs_task_one_model,
    .terms = vae_terms,
    .opts = vae_opts,
    .generative = true,
    .init = vae_init,
    .step = vae_step,
    .evaluate = vae_evaluate,
    .sample = vae_sample,
    .predict = vae_predict,
};
