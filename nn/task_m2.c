/* task_m2.c - Kingma et al.'s M2 (SemiVAE) trained with labels, as in Eq. 8 of "Learning the
 * invariances of a classifier with a supervised VAE".  With -U(x, y) = -log p(x|y,z) +
 * KL(q(z|x,y) || N(0, I)), z ~ q(z|x,y), per batch (means, nats):
 *   recon, kl   the two parts of -U(x, y) for the true label
 *   unlabelled  sum_c q(c|x) (-U(x, c)) - H(q(y|x))   (Eq. 8's second and third terms; weight `unlabelled`)
 *   ce          -log q(y|x)                             (Eq. 8's last term, weight alpha)
 *   loss        recon + kl + unlabelled * unlabelled_term + alpha ce
 * The constant log p(y) = -log C is left out.  Classification: q(y|x), the first output. */
#include "nn/svae_internal.h"
#include "versus/composite.h"
#include "versus/ops.h"

#include <stdlib.h>

enum { OPT_ALPHA, OPT_UNLABELLED };
static const vs_task_opt_def m2_opts[] = {
    {"alpha", 60, 0, 1e9, NULL, "weight of the classification term -log q(y|x) (Eq. 8)"},
    {"unlabelled", 1, 0, 1e6, NULL, "weight of sum_c q(c|x) U(x,c) + H(q(y|x)) (1: Eq. 8 as written, 0: labelled ELBO only)"},
    {NULL, 0, 0, 0, NULL, NULL},
};
static const char *const m2_terms[] = {"loss", "recon", "kl", "unlabelled", "ce", NULL};
static const char *const xy_names[] = {"x", "y"};

/* sum_c q(c|x) (-U(x, c)) - H(q(y|x)) per row [n]: every class at once, as one batch of C n rows. */
static vs_tensor *unlabelled_term(vs_task_run *r, vs_tensor *x, vs_tensor *class_logits, int64_t n, int64_t c, vs_error *err)
{
    int64_t *labels = malloc((size_t)(n * c) * sizeof *labels);
    vs_tensor **copies = malloc((size_t)c * sizeof *copies);
    vs_tensor *given[2] = {NULL, NULL}, *o[3], *res = NULL;
    if (labels && copies) {
        for (int64_t k = 0; k < c; k++) {
            copies[k] = x;
            for (int64_t i = 0; i < n; i++) labels[k * n + i] = k;
        }
        given[0] = vs_concat((int)c, copies, 0), given[1] = vs_one_hot(labels, n * c, c);
    }
    free(labels);
    free(copies);
    const char *want[] = {"mu", "logvar", "x_logits"};
    if (!given[0] || !given[1]) {
        vs_error_set(err, VS_ERR_NOMEM, "m2: out of memory");
        return NULL;
    }
    if (vs_module_eval(r->model, 2, xy_names, given, 3, want, o, r->forward, err) != VS_OK) return NULL;
    vs_tensor *neg_u = vs_add(vs_bernoulli_nll_rows(o[2], given[0]), vs_kl_diag_gaussian_rows(o[0], o[1], NULL, NULL));
    neg_u = vs_transpose(vs_reshape(neg_u, 2, (int64_t[]){c, n}), 0, 1); /* [n, c] */
    vs_tensor *q = vs_softmax(class_logits, 1), *logq = vs_log_softmax(class_logits, 1);
    res = vs_sum(vs_mul(q, vs_add(neg_u, logq)), VS_AXIS(1), false);
    if (!res) vs_error_set(err, vs_last_error()->code, "m2: %s", vs_last_error()->msg);
    return res;
}

static vs_status m2_step(vs_task_run *r, const int64_t *rows, int64_t n, double *terms, vs_error *err)
{
    vs_tensor *given[2], *o[4];
    const int64_t *labels;
    vs_status st = vs_svae_batch(r, r->data, rows, n, &given[0], &given[1], &labels, err);
    const char *want[] = {"class_logits", "mu", "logvar", "x_logits"};
    if (st == VS_OK) st = vs_module_eval(r->model, 2, xy_names, given, 4, want, o, r->forward, err);
    if (st != VS_OK) return st;
    vs_tensor *recon = vs_mean(vs_bernoulli_nll_rows(o[3], given[0]), VS_ALL_AXES, false);
    vs_tensor *kl = vs_kl_diag_gaussian(o[1], o[2], NULL, NULL), *ce = vs_cross_entropy(o[0], labels);
    vs_tensor *loss = vs_add(vs_add(recon, kl), vs_mul_scalar(ce, (float)r->opt[OPT_ALPHA])), *unl = NULL;
    if (r->opt[OPT_UNLABELLED] > 0) {
        unl = unlabelled_term(r, given[0], o[0], n, given[1]->shape[1], err);
        if (!unl) return err->code;
        unl = vs_mean(unl, VS_ALL_AXES, false);
        loss = vs_add(loss, vs_mul_scalar(unl, (float)r->opt[OPT_UNLABELLED]));
    }
    if (!loss) return vs_error_set(err, vs_last_error()->code, "m2: %s", vs_last_error()->msg);
    terms[0] = vs_item(loss), terms[1] = vs_item(recon), terms[2] = vs_item(kl), terms[3] = unl ? vs_item(unl) : 0, terms[4] = vs_item(ce);
    return vs_task_update(r, "model", loss, err);
}

const vs_task vs_task_m2 = {
    .name = "m2",
    .help = "m2: Kingma et al.'s M2 with labels (x, y -> class_logits = q(y|x), mu, logvar = q(z|x,y), x_logits = p(x|y,z));\n"
            "    loss = -U(x,y) + unlabelled (sum_c q(c|x) (-U(x,c)) - H(q(y|x))) + alpha CE(q(y|x)) (Eq. 8);\n"
            "    reports test_accuracy of q(y|x), test_R = E log p(x|y,z), test_kl.",
    .optims = vs_task_one_model,
    .terms = m2_terms,
    .opts = m2_opts,
    .generative = true,
    .init = vs_svae_task_init,
    .clear = vs_svae_task_clear,
    .step = m2_step,
    .evaluate = vs_svae_task_evaluate,
    .sample = vs_svae_task_sample,
};
