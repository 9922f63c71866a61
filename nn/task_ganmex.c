/* task_ganmex.c - the GANMEX task (Shih et al., "GANMEX: one-vs-one attributions guided by
 * GAN-generated counterfactual explanation baselines", Eq. 9): a StarGAN G(x, c) trained against a
 * PatchGAN critic (WGAN-GP) whose class term comes from the frozen classifier S being explained
 * instead of the critic's D_cls, plus an L1 similarity term:
 *   L_D = mean D(G(x, c')) - mean D(x) + lambda_gp gp
 *   L_G = -mean D(G(x, c')) + lambda_cls CE(S(G(x, c')), c') + lambda_rec |x - G(G(x, c'), c_y)|_1
 *         + lambda_sim |x - G(x, c')|_1
 * (Eq. 9 writes the adversarial term as log(1 - D_src); the authors' StarGAN, TF-GAN's, uses the
 * Wasserstein loss with the gradient penalty, as here.)  The engine is the gan task's (gan_internal.h);
 * this file holds the options, the model's third child and the checks.
 *
 * The model: a composite with children "generator" (x, c -> y), "critic" (x -> src, optional cls)
 * and "classifier" (S: a trained classifier, `versus train --classifier DIR`), task "ganmex".  S is
 * kept in evaluation mode and has no optimiser; it also judges the test images: metrics
 * target_class_rate (share of G(x, c') that S assigns to c') and baseline_l2.
 *
 * Defaults (documented in `versus help train`):
 *   n_critic 1      the authors' gen_disc_step_ratio 1.0 (TF-GAN stargan_estimator/train.py)
 *   lambda_gp 10    StarGAN and TF-GAN
 *   lambda_cls 5    appendix E: low weights leave transformations unfinished, high ones add noise
 *                   (the released code's default is 1); 5 and lambda_sim 30 were chosen on short MNIST
 *                   runs (10 and 50-100 gave adversarial dot patterns instead of digits)
 *   lambda_rec 0    appendix D: the reconstruction term is not needed by GANMEX
 *   lambda_sim 30   the similarity term, L1 per pixel on [-1,1] images, 30x the adversarial term;
 *                   appendix E: too high makes the baseline the input itself, zero lets colours drift
 *   range tanh      StarGAN's tanh generator; images mapped to [-1,1]
 *   cls classifier  the class term from S; "critic": the stand-alone ablation (appendix D), D_cls
 *                   trained jointly on the real labels and giving the generator's class term
 *   warm_start 0    not in the paper: the first N steps train G alone as an autoencoder, mean
 *                   (G(x, c) - x)^2 for a random c, before the GAN steps.  On coloured MNIST the
 *                   L1 term drives G to the all-black image (94% of the elements are background)
 *                   and G never follows its input's colour in a short run; the squared error does
 *                   not have that median (bench/results/ganmex.md, coloured MNIST)
 * The authors' learning rates (G 2e-5, D 1e-4, Adam betas 0.9, 0.999; 100k steps) are set with
 * --optimizers 'generator:lr=2e-5;critic:lr=1e-4'; for runs of minutes `versus bench ganmex` keeps
 * their 1:4-5 ratio at G 1e-4, D 4e-4 (beta1 0.5). */
#include "nn/gan_internal.h"
#include "versus/composite.h"

#include <stdio.h>
#include <string.h>

enum { OPT_LAMBDA_SIM = VS_GAN_N_OPTS, OPT_CLS, OPT_WARM_START };
enum { T_WARM = VS_GAN_T_GSIM + 1 };
enum { CLS_CLASSIFIER, CLS_CRITIC };

static const char *const cls_choices[] = {"classifier", "critic", NULL};
static const vs_task_opt_def ganmex_opts[] = {
    VS_GAN_OPT_DEFS(1, 5, 0, VS_GAN_RANGE_TANH),
    {"lambda_sim", 30, 0, 1e6, NULL, "weight of the similarity term mean |x - G(x, c')| (GANMEX Eq. 9)"},
    {"cls", CLS_CLASSIFIER, 0, 1, cls_choices, "classifier: class term from the frozen S; critic: D_cls trained jointly (ablation)"},
    {"warm_start", 0, 0, 1e9, NULL, "first steps train G alone as an autoencoder, mean (G(x, c) - x)^2 (0: none)"},
    {NULL, 0, 0, 0, NULL, NULL},
};
static const char *const ganmex_optims[] = {"generator", "critic", NULL};
static const char *const ganmex_terms[] = {"d_loss", "g_loss", "gp", "d_cls", "g_cls", "g_rec", "g_sim", "g_warm", NULL};
static const char *const ganmex_streams[] = {"noise", NULL};

static vs_status ganmex_init(vs_task_run *r, vs_error *err)
{
    vs_module *judge = vs_task_model(r, "classifier");
    if (!judge)
        return vs_error_set(err, VS_ERR_ARG, "ganmex: the model has no \"classifier\" (the classifier to explain: --classifier DIR)");
    vs_status st = vs_gan_init(r, err);
    if (st != VS_OK) return st;
    vs_gan_state *s = r->state;
    if (!s->conditional)
        return vs_error_set(err, VS_ERR_ARG, "ganmex: the generator must take \"x\" and \"c\" (a StarGAN generator G(x, c))");
    bool critic_cls = (int)r->opt[OPT_CLS] == CLS_CRITIC;
    if (critic_cls && !s->has_cls) return vs_error_set(err, VS_ERR_ARG, "ganmex: cls=critic needs a critic with a \"cls\" output");
    s->judge = judge, s->critic_cls = critic_cls, s->lambda_sim = r->opt[OPT_LAMBDA_SIM];
    vs_module_train(judge, false);
    /* S must give one logit per class of the data for one image */
    vs_scope_begin();
    vs_tensor *x = vs_tensor_zeros(VS_SHAPE(1, r->data->shape[0], r->data->shape[1], r->data->shape[2])), *y = NULL;
    const char *name = judge->kind == VS_MODULE_COMPOSITE ? vs_composite_input_name(judge, 0) : "x";
    const char *want = judge->kind == VS_MODULE_COMPOSITE ? vs_composite_output_name(judge, 0) : "logits";
    bool grad = vs_set_grad_enabled(false);
    st = x ? vs_module_eval(judge, 1, &name, &x, 1, &want, &y, NULL, err) : vs_error_set(err, VS_ERR_NOMEM, "ganmex: out of memory");
    vs_set_grad_enabled(grad);
    if (st == VS_OK && (y->ndim != 2 || y->shape[1] != r->data->n_classes))
        st = vs_error_set(err, VS_ERR_SHAPE, "ganmex: the classifier gives %lld outputs per image; the data has %lld classes",
                          (long long)y->size, (long long)r->data->n_classes);
    else if (st != VS_OK) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        st = vs_error_set(err, st, "ganmex: the classifier does not take the data's images: %.400s", why);
    }
    vs_scope_end();
    return st;
}

/* A warm-start step: G alone, mean (G(x, c) - x)^2 in [0,1] units for one random class c of the batch.
 * The squared error, unlike L1, does not settle at the all-dark median on sparse coloured images. */
static vs_status warm_step(vs_task_run *r, const int64_t *rows, int64_t n, double *terms, vs_error *err)
{
    vs_tensor *x, *y;
    if (vs_train_input(r->data, rows, n, &x, NULL, &(vs_forward_ctx){0}, err) != VS_OK) return err->code;
    int64_t c = (int64_t)vs_rng_below(&r->streams[0], (uint64_t)r->data->n_classes);
    vs_status st = vs_gan_predict(r->model, r->opt, x, c, &y, err);
    if (st != VS_OK) return st;
    vs_tensor *loss = vs_mse_loss(y, x);
    if (loss) terms[T_WARM] = vs_item(loss);
    return vs_task_update(r, "generator", loss, err);
}

static vs_status ganmex_step(vs_task_run *r, const int64_t *rows, int64_t n, double *terms, vs_error *err)
{
    if (r->global_step < (int64_t)r->opt[OPT_WARM_START]) return warm_step(r, rows, n, terms, err);
    return vs_gan_step(r, rows, n, terms, err);
}

/* The generator's instance norms use each image's own statistics in every mode, as in the authors'
 * TF-GAN StarGAN (its instance_norm keeps no running statistics): evaluation, samples and prediction
 * run G in training mode (its running buffers, written there, are never read); S stays in evaluation. */
static bool generator_mode(vs_module *root, bool training)
{
    vs_module *g = vs_module_child(root, "generator");
    bool was = g && g->training;
    if (g) vs_module_train(g, training);
    return was;
}

static vs_status ganmex_evaluate(vs_task_run *r, vs_train_result *res, vs_error *err)
{
    bool was = generator_mode(r->model, true);
    vs_status st = vs_gan_evaluate(r, res, err);
    generator_mode(r->model, was);
    return st;
}

static vs_status ganmex_sample(vs_task_run *r, vs_rng *rng, vs_tensor **out, int *rows, int *cols, vs_error *err)
{
    bool was = generator_mode(r->model, true);
    vs_status st = vs_gan_sample(r, rng, out, rows, cols, err);
    generator_mode(r->model, was);
    return st;
}

static vs_status ganmex_predict(vs_module *m, const double *opt, vs_tensor *x, int64_t cls, vs_tensor **y, vs_error *err)
{
    bool was = generator_mode(m, true);
    vs_status st = vs_gan_predict(m, opt, x, cls, y, err);
    generator_mode(m, was);
    return st;
}

const vs_task vs_task_ganmex = {
    .name = "ganmex",
    .help = "ganmex: GANMEX Eq. 9, a composite of \"generator\" (x, c -> y), \"critic\" (x -> src [, cls]) and the\n"
            "    frozen \"classifier\" S (--classifier DIR): WGAN-GP, class term CE(S(G(x, c')), c'), similarity\n"
            "    lambda_sim |x - G(x, c')|_1, optional cycle term; reports target_class_rate (S(G(x, c')) = c') and\n"
            "    baseline_l2 on the test images.  Authors' rates: --optimizers 'generator:lr=2e-5;critic:lr=1e-4'.\n"
            "    warm_start=N first trains G alone N steps as an autoencoder (mean (G(x, c) - x)^2): a generator\n"
            "    that follows its input before the GAN starts (coloured MNIST, where L1 alone goes all black).",
    .optims = ganmex_optims,
    .terms = ganmex_terms,
    .streams = ganmex_streams,
    .opts = ganmex_opts,
    .generative = true,
    .init = ganmex_init,
    .clear = vs_gan_clear,
    .step = ganmex_step,
    .evaluate = ganmex_evaluate,
    .sample = ganmex_sample,
    .predict = ganmex_predict,
};
