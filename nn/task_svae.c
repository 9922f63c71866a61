/* task_svae.c - the supervised VAE task (SVAE, Eqs. 6-7 of "Learning the invariances of a classifier
 * with a supervised VAE"), and what it shares with the m2 task (nn/svae_internal.h).  Per batch, with
 * z ~ q(z|x,y) and z = (z1, z2) (batch means, nats):
 *   recon = -log p(x|z)                          (6b, Bernoulli decoder)
 *   kl    = KL(q(z|x,y) || N(0, I))              (6c)
 *   suff  = KL(q(z|x,y) || q(z|x))               (6d, the sufficiency term)
 *   ce    = -log p(y|z1)                         (6e with Eq. 7: the classifier reads z1 only)
 *   loss  = beta (recon + kl) + (1 - beta) suff + alpha ce
 * which is -L_beta of Eq. 6 with the classifier weighted by alpha.  Classification of an unseen x
 * (Eq. 4 and 7) is p(y | z1 = mean of q(z1|x)): the model's first output "class_logits". */
#include "nn/svae_internal.h"
#include "versus/composite.h"
#include "versus/ops.h"

#include <math.h>
#include <stdlib.h>

#define EVAL_STREAM 0x7376616576616cull /* "svaeval": seed ^ this draws the evaluation's z */
#define GRID 8                          /* sample grids: GRID rows of GRID images */

typedef struct svae_state {
    int64_t *labels; /* [max(batch size, VS_TRAIN_EVAL_BATCH)] the current batch's */
    vs_svae_layout layout;
} svae_state;

vs_status vs_svae_task_init(vs_task_run *r, vs_error *err)
{
    if (r->data->kind == VS_DATA_GRAPHS) return vs_error_set(err, VS_ERR_ARG, "the svae and m2 tasks train on images or rows, not graphs");
    svae_state *s = calloc(1, sizeof *s);
    if (!s) return vs_error_set(err, VS_ERR_NOMEM, "train: out of memory");
    r->state = s;
    vs_status st = vs_svae_layout_of(r->model, &s->layout, err);
    if (st != VS_OK) return st;
    if (s->layout.n_classes != r->data->n_classes)
        return vs_error_set(err, VS_ERR_ARG, "the model's \"y\" has %lld classes; %s has %lld", (long long)s->layout.n_classes, r->data->name,
                            (long long)r->data->n_classes);
    int64_t n = r->opts->batch_size > VS_TRAIN_EVAL_BATCH ? r->opts->batch_size : VS_TRAIN_EVAL_BATCH;
    s->labels = malloc((size_t)n * sizeof *s->labels);
    return s->labels ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "train: out of memory");
}

void vs_svae_task_clear(vs_task_run *r)
{
    svae_state *s = r->state;
    if (s) free(s->labels);
    free(s);
    r->state = NULL;
}

vs_status vs_svae_batch(vs_task_run *r, const vs_dataset *d, const int64_t *rows, int64_t n, vs_tensor **x, vs_tensor **y,
                        const int64_t **labels, vs_error *err)
{
    svae_state *s = r->state;
    vs_status st = vs_train_input(d, rows, n, x, NULL, &(vs_forward_ctx){0}, err);
    if (st != VS_OK) return st;
    for (int64_t k = 0; k < n; k++) s->labels[k] = d->y[rows[k]];
    *labels = s->labels;
    *y = vs_one_hot(s->labels, n, s->layout.n_classes);
    return *y ? VS_OK : vs_error_set(err, VS_ERR_ARG, "%s: a label outside [0, %lld)", d->name, (long long)s->layout.n_classes);
}

static const char *const xy_names[] = {"x", "y"};

enum { OPT_ALPHA, OPT_BETA };
static const vs_task_opt_def svae_opts[] = {
    {"alpha", 60, 0, 1e9, NULL, "weight of the latent classifier -log p(y|z1) (Eq. 6e)"},
    {"beta", 0.9, 0, 1, NULL, "beta log p(x,y) + (1 - beta) log p(y|x): weight of reconstruction and prior KL vs sufficiency"},
    {NULL, 0, 0, 0, NULL, NULL},
};
static const char *const svae_terms[] = {"loss", "recon", "kl", "sufficiency", "ce", NULL};

static vs_status svae_step(vs_task_run *r, const int64_t *rows, int64_t n, double *terms, vs_error *err)
{
    vs_tensor *given[2], *o[6];
    const int64_t *labels;
    vs_status st = vs_svae_batch(r, r->data, rows, n, &given[0], &given[1], &labels, err);
    const char *want[] = {"mu", "logvar", "mu_x", "logvar_x", "y_logits", "x_logits"};
    if (st == VS_OK) st = vs_module_eval(r->model, 2, xy_names, given, 6, want, o, r->forward, err);
    if (st != VS_OK) return st;
    double alpha = r->opt[OPT_ALPHA], beta = r->opt[OPT_BETA];
    vs_tensor *recon = vs_mean(vs_bernoulli_nll_rows(o[5], given[0]), VS_ALL_AXES, false);
    vs_tensor *kl = vs_kl_diag_gaussian(o[0], o[1], NULL, NULL), *suff = vs_kl_diag_gaussian(o[0], o[1], o[2], o[3]);
    vs_tensor *ce = vs_cross_entropy(o[4], labels);
    vs_tensor *loss = vs_add(vs_add(vs_mul_scalar(vs_add(recon, kl), (float)beta), vs_mul_scalar(suff, (float)(1 - beta))),
                             vs_mul_scalar(ce, (float)alpha));
    if (!loss) return vs_error_set(err, vs_last_error()->code, "svae: %s", vs_last_error()->msg);
    terms[0] = vs_item(loss), terms[1] = vs_item(recon), terms[2] = vs_item(kl), terms[3] = vs_item(suff), terms[4] = vs_item(ce);
    return vs_task_update(r, "model", loss, err);
}

vs_status vs_svae_task_evaluate(vs_task_run *r, vs_train_result *res, vs_error *err)
{
    const vs_train_split *sp = r->split;
    vs_rng rng;
    vs_rng_seed(&rng, r->opts->seed ^ EVAL_STREAM);
    double correct = 0, recon = 0, kl = 0;
    vs_status st = VS_OK;
    const char *want[] = {"class_logits", "mu", "logvar", "x_logits"};
    for (int64_t i0 = 0; i0 < sp->n_test && st == VS_OK; i0 += VS_TRAIN_EVAL_BATCH) {
        int64_t nb = sp->n_test - i0 < VS_TRAIN_EVAL_BATCH ? sp->n_test - i0 : VS_TRAIN_EVAL_BATCH, pred[VS_TRAIN_EVAL_BATCH];
        vs_scope_begin();
        bool grad = vs_set_grad_enabled(false);
        vs_tensor *given[2], *o[4];
        const int64_t *labels;
        st = vs_svae_batch(r, r->test, sp->test + i0, nb, &given[0], &given[1], &labels, err);
        if (st == VS_OK) st = vs_module_eval(r->model, 2, xy_names, given, 4, want, o, &rng, err);
        if (st == VS_OK) {
            vs_argmax_rows(o[0], pred);
            for (int64_t k = 0; k < nb; k++) correct += pred[k] == labels[k];
            recon += (double)vs_item(vs_sum(vs_bernoulli_nll_rows(o[3], given[0]), VS_ALL_AXES, false));
            kl += (double)vs_item(vs_sum(vs_kl_diag_gaussian_rows(o[1], o[2], NULL, NULL), VS_ALL_AXES, false));
        }
        vs_set_grad_enabled(grad);
        vs_scope_end();
    }
    res->n_train = sp->n_train, res->n_test = sp->n_test;
    if (st != VS_OK || sp->n_test == 0) return st;
    double n = (double)sp->n_test;
    st = vs_train_result_put(res, "test_accuracy", correct / n);
    if (st == VS_OK) st = vs_train_result_put(res, "test_R", -recon / n);
    if (st == VS_OK) st = vs_train_result_put(res, "test_kl", kl / n);
    return st == VS_OK ? VS_OK : vs_error_set(err, st, "svae: the metrics table is full");
}

vs_status vs_svae_task_sample(vs_task_run *r, vs_rng *rng, vs_tensor **out, int *rows, int *cols, vs_error *err)
{
    const vs_dataset *d = r->test;
    const vs_train_split *sp = r->split;
    svae_state *s = r->state;
    if (d->kind != VS_DATA_IMAGES) return vs_error_set(err, VS_ERR_ARG, "samples: the svae and m2 tasks draw grids of images; %s holds rows", d->name);
    int64_t pool = sp->n_test > 0 ? sp->n_test : sp->n_train, idx[GRID];
    const int64_t *from = sp->n_test > 0 ? sp->test : sp->train;
    const vs_dataset *src = sp->n_test > 0 ? d : r->data;
    for (int64_t i = 0; i < GRID; i++) idx[i] = from[i % pool];
    vs_tensor *x, *z1, *z2, *rec;
    vs_status st = vs_train_input(src, idx, GRID, &x, NULL, &(vs_forward_ctx){0}, err);
    if (st == VS_OK) st = vs_svae_encode(r->model, &s->layout, x, &z1, &z2, err);
    if (st == VS_OK) st = vs_svae_decode(r->model, &s->layout, z1, z2, &rec, err);
    if (st != VS_OK) return st;
    /* columns: x, its reconstruction, GRID - 2 draws of z2 ~ N(0, 1) with z1 kept */
    vs_tensor *parts[GRID];
    parts[0] = x, parts[1] = vs_reshape(rec, x->ndim, x->shape);
    for (int c = 2; c < GRID && st == VS_OK; c++) {
        vs_tensor *y;
        st = vs_svae_decode(r->model, &s->layout, z1, vs_tensor_randn(VS_SHAPE(GRID, s->layout.k2), rng, 0, 1), &y, err);
        if (st == VS_OK) parts[c] = vs_reshape(y, x->ndim, x->shape);
    }
    if (st != VS_OK) return st;
    /* [cols * rows, ...] -> [rows * cols, ...] (row-major grid) */
    int64_t dim = x->size / GRID;
    vs_tensor *t = vs_transpose(vs_reshape(vs_concat(GRID, parts, 0), 3, (int64_t[]){GRID, GRID, dim}), 0, 1);
    *out = vs_reshape(t, x->ndim, (int64_t[]){GRID * GRID, x->shape[1], x->shape[2], x->shape[3]});
    *rows = GRID, *cols = GRID;
    return *out ? VS_OK : vs_error_set(err, vs_last_error()->code, "samples: %s", vs_last_error()->msg);
}

const vs_task vs_task_svae = {
    .name = "svae",
    .help = "svae: supervised VAE (x, y -> class_logits, mu, logvar, x_logits, mu_x, logvar_x, y_logits);\n"
            "    loss = beta (recon + KL(q(z|x,y)||N(0,1))) + (1 - beta) KL(q(z|x,y)||q(z|x)) + alpha CE(p(y|z1));\n"
            "    reports test_accuracy of f(x) = p(y | mean z1 of q(z|x)), test_R = E log p(x|z), test_kl.",
    .optims = vs_task_one_model,
    .terms = svae_terms,
    .opts = svae_opts,
    .generative = true,
    .init = vs_svae_task_init,
    .clear = vs_svae_task_clear,
    .step = svae_step,
    .evaluate = vs_svae_task_evaluate,
    .sample = vs_svae_task_sample,
};
