/* svae_explain.c - explanations with a supervised VAE (versus/svae.h): invariant samples, the
 * class targets and counterfactuals of z1, and the latent divergence of Eq. 9, d(x, x~) =
 * KL(q(z_k|x) || q(z_k|x~)), as a model the attribution methods explain (x fixed, x~ the input). */
#include "versus/ops.h"
#include "versus/svae_explain.h"
#include "versus/train.h"

#include <stdlib.h>
#include <string.h>

/* x's example shape with n rows. */
static vs_tensor *as_images(vs_tensor *t, const vs_tensor *x, int64_t n)
{
    int64_t shape[VS_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    shape[0] = n;
    return vs_reshape(t, x->ndim, shape);
}

vs_status vs_svae_invariant(vs_module *m, const vs_svae_layout *l, vs_tensor *x, int64_t label, double sigma, int64_t want,
                            int64_t max_draws, vs_rng *rng, vs_tensor **out, int64_t *got, vs_error *err)
{
    *out = NULL, *got = 0;
    if (x->shape[0] != 1 || max_draws < 1 || want < 1) return vs_error_set(err, VS_ERR_ARG, "invariant samples: one image, draws >= 1");
    vs_tensor *z1, *z2, *xt, *logits;
    vs_status st = vs_svae_encode(m, l, x, &z1, &z2, err);
    if (st == VS_OK) st = vs_svae_decode(m, l, vs_expand(z1, VS_SHAPE(max_draws, l->k1)),
                                         vs_tensor_randn(VS_SHAPE(max_draws, l->k2), rng, 0, (float)sigma), &xt, err);
    if (st == VS_OK) xt = as_images(xt, x, max_draws), st = vs_svae_classify(m, xt, &logits, err);
    int64_t *pred = st == VS_OK ? malloc((size_t)max_draws * 2 * sizeof *pred) : NULL, *idx = pred ? pred + max_draws : NULL;
    if (st == VS_OK && !pred) st = vs_error_set(err, VS_ERR_NOMEM, "invariant samples: out of memory");
    if (st == VS_OK) {
        vs_argmax_rows(logits, pred);
        for (int64_t i = 0; i < max_draws && *got < want; i++)
            if (label < 0 || pred[i] == label) idx[(*got)++] = i;
        if (*got == 0) idx[0] = 0; /* none kept: a one-row placeholder the caller ignores (*got is 0) */
        *out = vs_index_select(xt, 0, idx, *got ? *got : 1);
        if (!*out) st = vs_error_set(err, VS_ERR_NOMEM, "invariant samples: out of memory");
    }
    free(pred);
    return st;
}

vs_status vs_svae_class_targets(vs_module *m, const vs_svae_layout *l, const vs_dataset *d, int64_t n_max, vs_tensor **out,
                                vs_error *err)
{
    int64_t c = l->n_classes, k1 = l->k1;
    vs_tensor *t = vs_tensor_zeros(VS_SHAPE(c, k1));
    double *count = calloc((size_t)c, sizeof *count);
    vs_status st = t && count ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "class targets: out of memory");
    if (st == VS_OK && l->kind == VS_SVAE_M2)
        for (int64_t y = 0; y < c; y++) t->data[y * k1 + y] = 1, count[y] = 1;
    if (st == VS_OK && l->kind == VS_SVAE_SVAE && (!d || d->n_classes != c))
        st = vs_error_set(err, VS_ERR_ARG, "class targets: the SVAE needs labelled images of its %lld classes", (long long)c);
    int64_t n = l->kind == VS_SVAE_SVAE && d ? (d->n < n_max ? d->n : n_max) : 0;
    for (int64_t i0 = 0; i0 < n && st == VS_OK; i0 += 256) {
        int64_t nb = n - i0 < 256 ? n - i0 : 256, rows[256];
        for (int64_t i = 0; i < nb; i++) rows[i] = i0 + i;
        vs_scope_begin();
        vs_tensor *x, *z1, *z2;
        st = vs_train_input(d, rows, nb, &x, NULL, &(vs_forward_ctx){0}, err);
        if (st == VS_OK) st = vs_svae_encode(m, l, x, &z1, &z2, err);
        for (int64_t i = 0; st == VS_OK && i < nb; i++) {
            int64_t y = d->y[i0 + i];
            count[y]++;
            for (int64_t j = 0; j < k1; j++) t->data[y * k1 + j] += z1->data[i * k1 + j];
        }
        vs_scope_end();
    }
    for (int64_t y = 0; st == VS_OK && l->kind == VS_SVAE_SVAE && y < c; y++)
        for (int64_t j = 0; j < k1; j++) t->data[y * k1 + j] /= (float)(count[y] ? count[y] : 1);
    free(count);
    *out = st == VS_OK ? t : NULL;
    if (st != VS_OK) vs_tensor_free(t);
    return st;
}

vs_status vs_svae_counterfactuals(vs_module *m, const vs_svae_layout *l, vs_tensor *x, vs_tensor *targets, vs_tensor **out,
                                  vs_error *err)
{
    vs_tensor *z1, *z2, *xt;
    int64_t c = targets->shape[0];
    vs_status st = vs_svae_encode(m, l, x, &z1, &z2, err);
    if (st == VS_OK) st = vs_svae_decode(m, l, targets, vs_expand(z2, VS_SHAPE(c, l->k2)), &xt, err);
    if (st == VS_OK) *out = as_images(xt, x, c);
    return st;
}

vs_status vs_svae_divergence_init(vs_svae_divergence *d, vs_module *m, const vs_svae_layout *l, vs_tensor *x, int part,
                                  vs_error *err)
{
    memset(d, 0, sizeof *d);
    if (x->shape[0] != 1) return vs_error_set(err, VS_ERR_SHAPE, "latent divergence: x must be one example, not %lld", (long long)x->shape[0]);
    d->m = m, d->layout = *l, d->part = part;
    bool grad = vs_set_grad_enabled(false);
    vs_scope_begin();
    vs_tensor *mu, *lv;
    vs_status st = vs_svae_posterior(m, l, x, part, &mu, &lv, err);
    if (st == VS_OK) d->mu = vs_keep(mu), d->logvar = vs_keep(lv);
    vs_scope_end();
    vs_set_grad_enabled(grad);
    return st;
}

void vs_svae_divergence_clear(vs_svae_divergence *d)
{
    vs_tensor_free(d->mu);
    vs_tensor_free(d->logvar);
    d->mu = d->logvar = NULL;
}

static vs_tensor *divergence_forward(void *ctx, vs_tensor *x)
{
    vs_svae_divergence *d = ctx;
    vs_tensor *mu, *lv;
    vs_error err;
    if (vs_svae_posterior(d->m, &d->layout, x, d->part, &mu, &lv, &err) != VS_OK) {
        vs_set_last_error(err.code, "%s", err.msg);
        return NULL;
    }
    int64_t n = mu->shape[0], k = mu->shape[1];
    vs_tensor *kl = vs_kl_diag_gaussian_rows(vs_expand(d->mu, VS_SHAPE(n, k)), vs_expand(d->logvar, VS_SHAPE(n, k)), mu, lv);
    return vs_reshape(kl, VS_SHAPE(n, 1));
}

vs_model_fn vs_svae_divergence_fn(vs_svae_divergence *d)
{
    vs_model_fn f = {.forward = divergence_forward, .ctx = d};
    return f;
}
