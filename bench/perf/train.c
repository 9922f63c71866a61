/* bench/perf/train.c - whole training steps and explainer runs of the papers' models: one run is
 * forward, loss, backward and an Adam step (suite "train"), or one explanation (suite "explain"),
 * on random data from fixed seeds.  bench/perf/torch_reference.py builds the same models in PyTorch
 * (its Train* classes) and compare.py reports seconds per step side by side.  Weights are
 * random: the time of a step does not depend on them. */
#include "bench/perf/perf.h"
#include "versus/arch.h"
#include "versus/composite.h"
#include "versus/explain.h"
#include "versus/method.h"
#include "versus/ops.h"
#include "versus/optim.h"

#include <stdlib.h>
#include <string.h>

enum { P_KIND, P_BATCH };

typedef enum train_kind {
    K_GANMEX,   /* GANMEX MNIST classifier, cross entropy over 10 classes, input [1,28,28] */
    K_CEM,      /* CEM-MAF Fashion-MNIST classifier, cross entropy over 6 classes */
    K_SIAMESE,  /* Siamese MLP 100-64-32, BCE of sigmoid(5 cos) over pairs */
    K_DIPVAE,   /* MLP encoder 784-1200-1200-16 with relu; MSE stands in for the VAE loss */
    K_STARGAN,  /* StarGAN-style generator on 28x28, L1 loss */
    K_WGAN_GP,  /* conv critic with the gradient penalty (double backward) */
    K_IG,       /* integrated gradients through vs_explain, 200 steps (no Adam step) */
    K_OCCLUSION, /* occlusion-1 through vs_explain: 784 one-pixel windows, incremental */
    K_SALIENCY, /* gradient of the target logit for a batch of 64 */
    K_VAE,      /* the zoo's VAE 784-400-20 (PyTorch's example), Bernoulli ELBO as task "vae" computes it */
    K_IG_MLP,   /* integrated gradients, 200 steps, on each of `batch` images: MLP 784-512-256-10 */
    K_IG_CONVPOOL, /* the same on conv 3x3 -> ReLU -> max pool -> conv 3x3 -> ReLU -> max pool -> linear -> linear */
    K_STARGAN_GAN /* the zoo's StarGAN generator and critic on 28x28, 10 classes: one critic step (WGAN,
                   * gradient penalty by double backward, class loss) and one generator step (adversarial,
                   * class and cycle terms) as task "gan" takes them */
} train_kind;

#define IG_STEPS 200
#define EXPLAIN_BATCH 64
#define SIAMESE_P 100
#define STARGAN_IN 4 /* image channel + 3 domain-label planes */
#define GP_WEIGHT 10.0f
#define VAE_HIDDEN 400
#define VAE_LATENT 20
#define GAN_CLASSES 10
#define GAN_CONV_DIM 32  /* nn/zoo.c's stargan-gen: 32 wide, 3 residual blocks, critic depth 3 on 28x28 */
#define GAN_G_REPEAT 3
#define GAN_D_REPEAT 3
#define REC_WEIGHT 10.0f /* StarGAN's lambda_rec; lambda_cls is 1 */

typedef struct train_state {
    train_kind kind;
    int64_t batch;
    vs_module *m;
    vs_optim *opt, *opt_d; /* opt_d: the critic's (K_STARGAN_GAN; opt is the generator's) */
    vs_tensor *x, *x2, *target; /* inputs (x2: second side of pairs / real batch) and regression targets */
    int64_t *labels;
    vs_rng rng; /* dropout masks, WGAN-GP mixing weights */
} train_state;

static void train_teardown(void *state)
{
    train_state *s = state;
    if (!s) return;
    vs_optim_free(s->opt);
    vs_optim_free(s->opt_d);
    vs_module_free(s->m);
    vs_tensor_free(s->x);
    vs_tensor_free(s->x2);
    vs_tensor_free(s->target);
    free(s->labels);
    free(s);
}

static bool add(vs_module *seq, vs_module *layer) { return vs_sequential_add(seq, layer) == VS_OK; }

/* conv k x k (no bias), instance norm, optional relu. */
static bool conv_in(vs_module *seq, int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad, bool relu,
                    bool transpose, vs_rng *r)
{
    vs_module *conv = transpose ? vs_conv_transpose2d_new(in, out, k, stride, pad, 0, false, r)
                                : vs_conv2d_new(in, out, k, stride, pad, false, r);
    return add(seq, conv) && add(seq, vs_instance_norm2d_new(out, 1e-5f)) &&
           (!relu || add(seq, vs_activation_new(VS_MODULE_RELU, 0)));
}

/* StarGAN generator (Choi et al. 2018) shrunk to 28x28: c7s1-32, d64, d128, R128 x2, u64, u32, c7s1-1, tanh. */
static vs_module *stargan_generator(vs_rng *r)
{
    vs_module *g = vs_sequential_new();
    bool ok = g && conv_in(g, STARGAN_IN, 32, 7, 1, 3, true, false, r) && conv_in(g, 32, 64, 4, 2, 1, true, false, r) &&
              conv_in(g, 64, 128, 4, 2, 1, true, false, r);
    for (int i = 0; ok && i < 2; i++) {
        vs_module *block = vs_sequential_new();
        ok = block && conv_in(block, 128, 128, 3, 1, 1, true, false, r) && conv_in(block, 128, 128, 3, 1, 1, false, false, r);
        ok = add(g, block ? vs_residual_new(block) : NULL) && ok;
    }
    ok = ok && conv_in(g, 128, 64, 4, 2, 1, true, true, r) && conv_in(g, 64, 32, 4, 2, 1, true, true, r) &&
         add(g, vs_conv2d_new(32, 1, 7, 1, 3, false, r)) && add(g, vs_activation_new(VS_MODULE_TANH, 0));
    if (!ok) {
        vs_module_free(g);
        return NULL;
    }
    return g;
}

/* WGAN-GP critic on 28x28: conv 1->64 k4 s2 p1, leaky 0.2, conv 64->128 k4 s2 p1, leaky 0.2, linear 6272 -> 1. */
static vs_module *wgan_critic(vs_rng *r)
{
    vs_module *d = vs_sequential_new();
    bool ok = d && add(d, vs_conv2d_new(1, 64, 4, 2, 1, true, r)) && add(d, vs_activation_new(VS_MODULE_LEAKY_RELU, 0.2f)) &&
              add(d, vs_conv2d_new(64, 128, 4, 2, 1, true, r)) &&
              add(d, vs_activation_new(VS_MODULE_LEAKY_RELU, 0.2f)) && add(d, vs_flatten_new()) &&
              add(d, vs_linear_new(128 * 7 * 7, 1, true, r));
    if (!ok) {
        vs_module_free(d);
        return NULL;
    }
    return d;
}

/* flatten, then 784 -> h1 -> h2 -> out with ReLUs between (the DIP-VAE encoder, the IG bench's MLP). */
static vs_module *flat_mlp(int64_t h1, int64_t h2, int64_t out, vs_rng *r)
{
    vs_module *e = vs_sequential_new();
    bool ok = e && add(e, vs_flatten_new()) && add(e, vs_linear_new(784, h1, true, r)) &&
              add(e, vs_activation_new(VS_MODULE_RELU, 0)) && add(e, vs_linear_new(h1, h2, true, r)) &&
              add(e, vs_activation_new(VS_MODULE_RELU, 0)) && add(e, vs_linear_new(h2, out, true, r));
    if (!ok) {
        vs_module_free(e);
        return NULL;
    }
    return e;
}

/* PyTorch's MNIST example without dropout: conv 1->32 k3 p1, ReLU, max pool 2, conv 32->64 k3 p1, ReLU,
 * max pool 2, linear 3136 -> 128, ReLU, linear 128 -> 10. */
static vs_module *ig_convpool(vs_rng *r)
{
    vs_module *m = vs_sequential_new();
    bool ok = m && add(m, vs_conv2d_new(1, 32, 3, 1, 1, true, r)) && add(m, vs_activation_new(VS_MODULE_RELU, 0)) &&
              add(m, vs_max_pool2d_new(2, 2, 0)) && add(m, vs_conv2d_new(32, 64, 3, 1, 1, true, r)) &&
              add(m, vs_activation_new(VS_MODULE_RELU, 0)) && add(m, vs_max_pool2d_new(2, 2, 0)) && add(m, vs_flatten_new()) &&
              add(m, vs_linear_new(3136, 128, true, r)) && add(m, vs_activation_new(VS_MODULE_RELU, 0)) &&
              add(m, vs_linear_new(128, 10, true, r));
    if (!ok) {
        vs_module_free(m);
        return NULL;
    }
    return m;
}

static void *train_setup(const vs_bench_case *c, int threads)
{
    (void)threads;
    train_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->kind = (train_kind)c->p[P_KIND];
    s->batch = c->p[P_BATCH];
    const int64_t n = s->batch;
    vs_rng r;
    vs_rng_seed(&r, 7);
    vs_rng_seed(&s->rng, 11);
    vs_error err;
    int64_t classes = 10;
    const int64_t img[4] = {n, 1, 28, 28};
    switch (s->kind) {
    case K_GANMEX:
    case K_IG:
    case K_OCCLUSION:
    case K_SALIENCY:
        s->m = vs_arch_ganmex_mnist(1, 28, 10, &r, &err);
        s->x = vs_tensor_rand(4, img, &r, 0, 1);
        break;
    case K_IG_MLP:
    case K_IG_CONVPOOL:
        s->m = s->kind == K_IG_MLP ? flat_mlp(512, 256, 10, &r) : ig_convpool(&r);
        s->x = vs_tensor_rand(4, img, &r, 0, 1);
        break;
    case K_CEM:
        classes = 6;
        s->m = vs_arch_cem_fashion(classes, &r, &err);
        s->x = vs_tensor_rand(4, img, &r, 0, 1);
        break;
    case K_SIAMESE: {
        const int64_t shape[2] = {n, SIAMESE_P}, t_shape[1] = {n};
        s->m = vs_arch_siamese_mlp(SIAMESE_P, 64, 32, &r, &err);
        s->x = vs_tensor_rand(2, shape, &r, 0, 1);
        s->x2 = vs_tensor_rand(2, shape, &r, 0, 1);
        s->target = vs_tensor_zeros(1, t_shape);
        if (s->target)
            for (int64_t i = 0; i < n; i++) s->target->data[i] = (float)(i % 2);
        break;
    }
    case K_DIPVAE: {
        const int64_t t_shape[2] = {n, 16};
        s->m = flat_mlp(1200, 1200, 16, &r);
        s->x = vs_tensor_rand(4, img, &r, 0, 1);
        s->target = vs_tensor_randn(2, t_shape, &r, 0, 1);
        break;
    }
    case K_STARGAN: {
        const int64_t in[4] = {n, STARGAN_IN, 28, 28};
        s->m = stargan_generator(&r);
        s->x = vs_tensor_rand(4, in, &r, -1, 1);
        s->target = vs_tensor_rand(4, img, &r, -1, 1);
        break;
    }
    case K_WGAN_GP:
        s->m = wgan_critic(&r);
        s->x = vs_tensor_rand(4, img, &r, -1, 1);  /* fake */
        s->x2 = vs_tensor_rand(4, img, &r, -1, 1); /* real */
        break;
    case K_VAE:
        s->m = vs_arch_vae_mlp(3, img + 1, VAE_HIDDEN, VAE_LATENT, &r, &err);
        s->x = vs_tensor_rand(4, img, &r, 0, 1); /* Bernoulli targets in [0, 1] */
        break;
    case K_STARGAN_GAN: {
        if (n > 64) break; /* gan_step keeps its targets on the stack */
        vs_module *g = vs_arch_stargan_generator(1, 28, GAN_CLASSES, GAN_CONV_DIM, GAN_G_REPEAT, &r, &err);
        vs_module *d = g ? vs_arch_stargan_critic(1, 28, GAN_CLASSES, GAN_CONV_DIM, GAN_D_REPEAT, &r, &err) : NULL;
        s->m = d ? vs_arch_gan(g, d, &err) : NULL;
        if (!d) vs_module_free(g);
        s->x = vs_tensor_rand(4, img, &r, -1, 1); /* real images in the generator's tanh range */
        classes = GAN_CLASSES;
        break;
    }
    }
    const vs_optim_opts o = vs_adam_opts(1e-4f);
    bool explain = s->kind == K_IG || s->kind == K_OCCLUSION || s->kind == K_SALIENCY || s->kind == K_IG_MLP ||
                   s->kind == K_IG_CONVPOOL;
    if (s->m && !explain && s->kind != K_STARGAN_GAN) s->opt = vs_optim_new_module(&o, s->m, &err);
    if (s->m && s->kind == K_STARGAN_GAN) {
        s->opt = vs_optim_new_module(&o, vs_module_child(s->m, "generator"), &err);
        s->opt_d = vs_optim_new_module(&o, vs_module_child(s->m, "critic"), &err);
        if (!s->opt_d) vs_optim_free(s->opt), s->opt = NULL;
    }
    s->labels = malloc(sizeof(int64_t) * (size_t)n);
    if (!s->m || (!explain && !s->opt) || !s->x || !s->labels || (s->kind == K_SIAMESE && (!s->x2 || !s->target)) ||
        ((s->kind == K_DIPVAE || s->kind == K_STARGAN) && !s->target) || (s->kind == K_WGAN_GP && !s->x2)) {
        train_teardown(s);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) s->labels[i] = i % classes;
    vs_module_train(s->m, !explain);
    return s;
}

/* WGAN-GP critic loss: mean D(fake) - mean D(real) + 10 mean (|dD/dx(xhat)| - 1)^2,
 * xhat = e real + (1 - e) fake with e ~ U[0,1) per sample. */
static vs_tensor *wgan_gp_loss(train_state *s)
{
    const int64_t n = s->batch, e_shape[4] = {n, 1, 1, 1};
    vs_tensor *e = vs_tensor_rand(4, e_shape, &s->rng, 0, 1);
    vs_tensor *xhat = vs_detach(vs_add(vs_mul(e, s->x2), vs_mul(vs_add_scalar(vs_neg(e), 1), s->x)));
    vs_set_requires_grad(xhat, true);
    vs_tensor *d_hat = vs_module_forward(s->m, xhat, NULL), *g = NULL;
    if (vs_grad(1, (vs_tensor *[]){vs_sum(d_hat, VS_ALL_AXES, false)}, NULL, 1, &xhat, &g, true) != VS_OK) return NULL;
    vs_tensor *norm = vs_sqrt(vs_add_scalar(vs_sum(vs_mul(g, g), VS_AXIS(1) | VS_AXIS(2) | VS_AXIS(3), false), 1e-12f));
    vs_tensor *gp = vs_mean(vs_pow_scalar(vs_add_scalar(norm, -1), 2), VS_ALL_AXES, false);
    vs_tensor *wd = vs_sub(vs_mean(vs_module_forward(s->m, s->x, NULL), VS_ALL_AXES, false),
                           vs_mean(vs_module_forward(s->m, s->x2, NULL), VS_ALL_AXES, false));
    return vs_add(wd, vs_mul_scalar(gp, GP_WEIGHT));
}

/* The VAE's negative ELBO per example: sum over pixels of BCE(x_logits, x) + KL(q(z|x) || N(0, I)),
 * z = mu + eps exp(logvar / 2) drawn from s->rng (task "vae" with beta 1). */
static vs_tensor *vae_loss(train_state *s)
{
    const char *in = "x", *want[3] = {"mu", "logvar", "x_logits"};
    vs_tensor *out[3];
    const vs_forward_ctx ctx = {.rng = &s->rng};
    if (vs_composite_eval(s->m, &(vs_named_tensors){1, 1, &(vs_named_tensor){(char *)in, s->x, false}}, 3, want, out, &ctx) != VS_OK)
        return NULL;
    vs_tensor *recon = vs_mul_scalar(vs_bce_with_logits(out[2], s->x), 28 * 28);
    return vs_add(recon, vs_kl_diag_gaussian(out[0], out[1], NULL, NULL));
}

/* G(x, one-hot(cls)) of the GAN root's generator. */
static vs_tensor *gan_generate(train_state *s, vs_tensor *x, const int64_t *cls)
{
    const int64_t n = x->shape[0];
    vs_tensor *c = vs_tensor_zeros(VS_SHAPE(n, GAN_CLASSES)), *y = NULL;
    for (int64_t i = 0; c && i < n; i++) c->data[i * GAN_CLASSES + cls[i]] = 1;
    vs_named_tensor given[2] = {{(char *)"x", x, false}, {(char *)"c", c, false}};
    const char *want = "y";
    vs_composite_eval(vs_module_child(s->m, "generator"), &(vs_named_tensors){2, 2, given}, 1, &want, &y, NULL);
    return y;
}

/* The critic's per-example score (PatchGAN map averaged) and, when cls is not NULL, its class logits. */
static vs_tensor *gan_critic(train_state *s, vs_tensor *x, vs_tensor **cls)
{
    const char *want[2] = {"src", "cls"};
    vs_tensor *out[2] = {0};
    vs_named_tensor given = {(char *)"x", x, false};
    if (vs_composite_eval(vs_module_child(s->m, "critic"), &(vs_named_tensors){1, 1, &given}, cls ? 2 : 1, want, out, NULL) != VS_OK)
        return NULL;
    if (cls) *cls = out[1];
    return vs_mean(out[0], VS_AXIS(1) | VS_AXIS(2) | VS_AXIS(3), false);
}

/* One StarGAN critic step then one generator step (Choi et al. 2018, Eqs. 1-3, WGAN-GP form):
 * critic: mean D(G(x,c')) - mean D(x) + 10 GP + CE(D_cls(x), y); generator: -mean D(G(x,c')) +
 * CE(D_cls(G(x,c')), c') + 10 |x - G(G(x,c'), y)|_1.  Labels y = i mod 10, targets c' = (i + 3) mod 10. */
static void gan_step(train_state *s)
{
    const int64_t n = s->batch, e_shape[4] = {n, 1, 1, 1};
    int64_t targets[64];
    for (int64_t i = 0; i < n; i++) targets[i] = (s->labels[i] + 3) % GAN_CLASSES;
    vs_error err;
    /* critic */
    bool grad = vs_set_grad_enabled(false);
    vs_tensor *fake = gan_generate(s, s->x, targets);
    vs_set_grad_enabled(grad);
    vs_tensor *cls_real = NULL;
    vs_tensor *e = vs_tensor_rand(4, e_shape, &s->rng, 0, 1);
    vs_tensor *xhat = vs_detach(vs_add(vs_mul(e, s->x), vs_mul(vs_add_scalar(vs_neg(e), 1), fake)));
    vs_set_requires_grad(xhat, true);
    vs_tensor *d_hat = gan_critic(s, xhat, NULL), *g = NULL;
    if (!d_hat || vs_grad(1, (vs_tensor *[]){vs_sum(d_hat, VS_ALL_AXES, false)}, NULL, 1, &xhat, &g, true) != VS_OK) return;
    vs_tensor *norm = vs_sqrt(vs_add_scalar(vs_sum(vs_mul(g, g), VS_AXIS(1) | VS_AXIS(2) | VS_AXIS(3), false), 1e-12f));
    vs_tensor *gp = vs_mean(vs_pow_scalar(vs_add_scalar(norm, -1), 2), VS_ALL_AXES, false);
    vs_tensor *d_real = gan_critic(s, s->x, &cls_real), *d_fake = gan_critic(s, fake, NULL);
    vs_tensor *loss_d = vs_add(vs_sub(vs_mean(d_fake, VS_ALL_AXES, false), vs_mean(d_real, VS_ALL_AXES, false)),
                               vs_add(vs_mul_scalar(gp, GP_WEIGHT), vs_cross_entropy(cls_real, s->labels)));
    if (!loss_d || vs_backward(loss_d, NULL, false) != VS_OK || vs_optim_step(s->opt_d, &err) != VS_OK) return;
    vs_optim_zero_grad(s->opt_d);
    /* generator */
    vs_tensor *cls_fake = NULL;
    fake = gan_generate(s, s->x, targets);
    vs_tensor *adv = fake ? gan_critic(s, fake, &cls_fake) : NULL;
    vs_tensor *back = fake ? gan_generate(s, fake, s->labels) : NULL;
    vs_tensor *loss_g = vs_add(vs_sub(vs_cross_entropy(cls_fake, targets), vs_mean(adv, VS_ALL_AXES, false)),
                               vs_mul_scalar(vs_l1_loss(back, s->x), REC_WEIGHT));
    if (!loss_g || vs_backward(loss_g, NULL, false) != VS_OK || vs_optim_step(s->opt, &err) != VS_OK) return;
    vs_optim_zero_grad(s->opt);
    vs_optim_zero_grad(s->opt_d); /* the generator's loss also reached the critic's parameters */
}

static vs_tensor *step_loss(train_state *s)
{
    const vs_forward_ctx ctx = {.rng = &s->rng};
    switch (s->kind) {
    case K_GANMEX:
    case K_CEM:
        return vs_cross_entropy(vs_module_forward(s->m, s->x, &ctx), s->labels);
    case K_SIAMESE:
        return vs_bce_with_logits(vs_mul_scalar(vs_siamese_forward(s->m, s->x, &ctx, s->x2, NULL), 5), s->target);
    case K_DIPVAE:
        return vs_mse_loss(vs_module_forward(s->m, s->x, &ctx), s->target);
    case K_STARGAN:
        return vs_l1_loss(vs_module_forward(s->m, s->x, &ctx), s->target);
    case K_WGAN_GP:
        return wgan_gp_loss(s);
    case K_VAE:
        return vae_loss(s);
    default:
        return NULL;
    }
}

/* Results of the explainers land here so the work cannot be optimised away. */
static volatile float explain_sink;

/* sum over rows of logits[i, target] for images xb [b,1,28,28]; target class 3. */
static vs_tensor *target_score(train_state *s, vs_tensor *xb)
{
    vs_tensor *logits = vs_module_forward(s->m, xb, NULL);
    return logits ? vs_sum(vs_slice(logits, 1, 3, 4), VS_ALL_AXES, false) : NULL;
}

/* d score / d xb for a batch of images. */
static vs_tensor *input_grad(train_state *s, vs_tensor *xb)
{
    vs_set_requires_grad(xb, true);
    vs_tensor *g = NULL, *score = target_score(s, xb);
    if (!score || vs_grad(1, &score, NULL, 1, &xb, &g, false) != VS_OK) return NULL;
    return g;
}

/* Attributions through the library, as a user gets them: vs_explain of the registry's method on the
 * module's model_fn with settings opts (target class 3, zero baseline, batches of 64) of x (image 0,
 * or the whole batch).  IG takes the path engine (vs_sequential_path_grads), Occlusion the
 * incremental forward (vs_sequential_forward_boxes); PyTorch's twins evaluate every point and copy
 * in full, in batches of 64, as Captum does. */
static void explain_images(train_state *s, const char *method, const char *opts, bool image0)
{
    vs_module_explainee e = {s->m, NULL};
    const vs_model_fn fn = vs_model_fn_from_module(&e);
    const vs_method *m = vs_method_find(method);
    vs_explain_request r;
    vs_explain_request_init(&r);
    r.target = 3;
    r.batch = EXPLAIN_BATCH;
    vs_error err;
    vs_method_opts *o = vs_method_opts_parse(m, opts, &err);
    vs_scope_begin();
    const int64_t one[4] = {1, 1, 28, 28};
    vs_tensor *x = image0 ? vs_tensor_from(4, one, s->x->data) : s->x, *attr = NULL;
    if (o && x && vs_explain(&fn, x, m, o, &r, &attr, NULL, &err) == VS_OK) explain_sink = attr->data[392];
    vs_scope_end();
    vs_method_opts_free(o);
}

/* IG with IG_STEPS midpoint steps: alpha_k = (k + 1/2) / 200, weights 1/200. */
#define IG_TEXT_(n) #n
#define IG_TEXT(n) IG_TEXT_(n)
#define IG_SETTINGS "steps=" IG_TEXT(IG_STEPS) " ig-rule=middle"

static void run_ig(train_state *s) { explain_images(s, "integrated_gradients", IG_SETTINGS, true); }

/* IG-200 (midpoints, zero baseline, target 3) of all the batch's images in one vs_explain call. */
static void run_ig_batch(train_state *s) { explain_images(s, "integrated_gradients", IG_SETTINGS, false); }

/* Occlusion-1: one-pixel windows. */
static void run_occlusion(train_state *s) { explain_images(s, "occlusion", NULL, true); }

static void train_run(void *state)
{
    train_state *s = state;
    if (s->kind == K_IG) {
        run_ig(s);
        return;
    }
    if (s->kind == K_OCCLUSION) {
        run_occlusion(s);
        return;
    }
    if (s->kind == K_IG_MLP || s->kind == K_IG_CONVPOOL) {
        run_ig_batch(s);
        return;
    }
    vs_scope_begin();
    if (s->kind == K_SALIENCY) {
        (void)input_grad(s, vs_detach(s->x));
    } else if (s->kind == K_STARGAN_GAN) {
        gan_step(s);
    } else {
        vs_optim_zero_grad(s->opt);
        vs_tensor *loss = step_loss(s);
        vs_error err;
        if (loss && vs_backward(loss, NULL, false) == VS_OK) (void)vs_optim_step(s->opt, &err);
    }
    vs_scope_end();
}

/* Shape of one example as it flows through a model: [c, h, w] images, or [c] vectors (h = w = 1). */
typedef struct flow {
    int64_t c, h, w;
    double macs;       /* multiply-adds of the conv and linear layers so far, one example */
    double first_macs; /* those of the first weighted layer (its input gradient is skipped in training) */
} flow;

static int64_t out_len(int64_t in, int64_t k, int64_t s, int64_t p) { return (in + 2 * p - k) / s + 1; }

static void weighted(flow *f, double macs)
{
    if (f->macs == 0) f->first_macs = macs;
    f->macs += macs;
}

/* Walk m, updating the shape and counting the multiply-adds of one example's forward. */
static void count_macs(const vs_module *m, flow *f)
{
    const vs_layer_spec *s = &m->spec;
    switch (m->kind) {
    case VS_MODULE_SEQUENTIAL:
    case VS_MODULE_SIAMESE:
    case VS_MODULE_COMPOSITE: /* the zoo's VAE: linear children only, counted in any order */
        for (int64_t i = 0; i < m->n_children; i++) count_macs(m->children[i], f);
        break;
    case VS_MODULE_RESIDUAL: /* a shape-preserving block */
        for (int64_t i = 0; i < m->n_children; i++) count_macs(m->children[i], f);
        break;
    case VS_MODULE_CONV2D: {
        const int64_t oh = out_len(f->h, s->kernel, s->stride, s->padding), ow = out_len(f->w, s->kernel, s->stride, s->padding);
        weighted(f, (double)s->out * oh * ow * s->in * s->kernel * s->kernel);
        f->c = s->out, f->h = oh, f->w = ow;
        break;
    }
    case VS_MODULE_CONV_TRANSPOSE2D:
        weighted(f, (double)s->in * f->h * f->w * s->out * s->kernel * s->kernel);
        f->h = (f->h - 1) * s->stride - 2 * s->padding + s->kernel + s->output_padding;
        f->w = (f->w - 1) * s->stride - 2 * s->padding + s->kernel + s->output_padding;
        f->c = s->out;
        break;
    case VS_MODULE_MAX_POOL2D:
    case VS_MODULE_AVG_POOL2D:
        f->h = out_len(f->h, s->kernel, s->stride, s->padding), f->w = out_len(f->w, s->kernel, s->stride, s->padding);
        break;
    case VS_MODULE_FLATTEN:
        f->c *= f->h * f->w, f->h = f->w = 1;
        break;
    case VS_MODULE_LINEAR:
        weighted(f, (double)s->in * s->out);
        f->c = s->out;
        break;
    default: /* activations, norms, dropout: no products, same shape */
        break;
    }
}

/* Floating-point operations of one run, counting 2 per multiply-add of the conv and linear layers
 * (elementwise work, norms and Adam are left out): a forward is F, each of the two backward
 * products (input gradient, weight gradient) costs F again.  A training step skips the first
 * layer's input gradient; an explanation needs input gradients only.  The WGAN-GP step (a double
 * backward) is not counted. */
static double train_flops(const vs_bench_case *c, int threads)
{
    (void)threads;
    const train_kind kind = (train_kind)c->p[P_KIND];
    const int64_t n = c->p[P_BATCH];
    vs_rng r;
    vs_rng_seed(&r, 7);
    vs_error err;
    vs_module *m = NULL;
    flow f = {1, 28, 28, 0, 0};
    switch (kind) {
    case K_GANMEX:
    case K_IG:
    case K_OCCLUSION:
    case K_SALIENCY:
        m = vs_arch_ganmex_mnist(1, 28, 10, &r, &err);
        break;
    case K_CEM:
        m = vs_arch_cem_fashion(6, &r, &err);
        break;
    case K_IG_MLP:
        m = flat_mlp(512, 256, 10, &r);
        break;
    case K_IG_CONVPOOL:
        m = ig_convpool(&r);
        break;
    case K_SIAMESE:
        m = vs_arch_siamese_mlp(SIAMESE_P, 64, 32, &r, &err);
        f.c = SIAMESE_P, f.h = f.w = 1;
        break;
    case K_DIPVAE:
        m = flat_mlp(1200, 1200, 16, &r);
        break;
    case K_STARGAN:
        m = stargan_generator(&r);
        f.c = STARGAN_IN;
        break;
    case K_VAE:
        m = vs_arch_vae_mlp(3, (const int64_t[]){1, 28, 28}, VAE_HIDDEN, VAE_LATENT, &r, &err);
        break;
    case K_WGAN_GP:
    case K_STARGAN_GAN:
        return 0;
    }
    if (!m) return 0;
    count_macs(m, &f);
    vs_module_free(m);
    const double fwd = 2 * f.macs, first = 2 * f.first_macs;
    switch (kind) {
    case K_IG:
        return IG_STEPS * 2 * fwd;
    case K_IG_MLP:
    case K_IG_CONVPOOL:
        return n * IG_STEPS * 2 * fwd;
    case K_OCCLUSION: /* 784 occluded copies and the unoccluded image, dense-equivalent */
        return 785 * fwd;
    case K_SALIENCY:
        return n * 2 * fwd;
    case K_SIAMESE: /* both sides of each pair go through the encoder */
        return 2 * n * (3 * fwd - first);
    default:
        return n * (3 * fwd - first);
    }
}

static void train_json(const vs_bench_case *c, FILE *out) { fprintf(out, ",\"batch\":%lld", (long long)c->p[P_BATCH]); }

#define TRAIN(suite_, name_, about_, kind, batch)                                                        \
    {.suite = suite_, .name = name_, .about = about_, .p = {kind, batch}, .setup = train_setup,          \
     .run = train_run, .teardown = train_teardown, .flops = train_flops, .json_fields = train_json}

const vs_bench_case vs_bench_train_cases[] = {
    TRAIN("train", "ganmex_mnist_step", "GANMEX MNIST classifier, batch 64, CE + Adam", K_GANMEX, 64),
    TRAIN("train", "cem_fashion_step", "CEM-MAF Fashion classifier (6 classes), batch 64, CE + Adam", K_CEM, 64),
    TRAIN("train", "siamese_mlp_step", "Siamese MLP 100-64-32, 128 pairs, BCE(sigmoid(5 cos)) + Adam", K_SIAMESE, 128),
    TRAIN("train", "dipvae_mlp_step", "MLP 784-1200-1200-16 relu, batch 64, MSE (stand-in for the VAE loss) + Adam",
          K_DIPVAE, 64),
    TRAIN("train", "stargan_gen_step", "StarGAN-style generator 28x28, batch 16, L1 + Adam", K_STARGAN, 16),
    TRAIN("train", "wgan_gp_disc_step", "conv critic 28x28, batch 16, WGAN loss + gradient penalty + Adam", K_WGAN_GP,
          16),
    TRAIN("train", "vae_mlp_step", "VAE 784-400-20 (zoo vae), batch 128, Bernoulli ELBO + Adam", K_VAE, 128),
    TRAIN("train", "stargan_gan_step",
          "StarGAN G + PatchGAN critic 28x28, 10 classes (zoo stargan-gen), batch 16: critic (WGAN-GP, cls) + generator "
          "(adv, cls, cycle) steps, Adam",
          K_STARGAN_GAN, 16),
    TRAIN("explain", "ig200_mnist", "IG via vs_explain: 200 midpoint steps on the GANMEX MNIST classifier, path engine", K_IG, 64),
    TRAIN("explain", "ig200_mlp16", "IG via vs_explain: 200 midpoint steps on each of 16 images, MLP 784-512-256-10",
          K_IG_MLP, 16),
    TRAIN("explain", "ig200_convpool16",
          "IG via vs_explain: 200 midpoint steps on each of 16 images, conv3x3-relu-pool-conv3x3-relu-pool-linear-linear",
          K_IG_CONVPOOL, 16),
    TRAIN("explain", "occlusion1_mnist", "Occlusion-1 via vs_explain: 784 one-pixel windows, incremental", K_OCCLUSION, 64),
    TRAIN("explain", "saliency64_mnist", "input gradient of the target logit, batch 64", K_SALIENCY, 64),
};
const size_t vs_bench_train_count = sizeof vs_bench_train_cases / sizeof vs_bench_train_cases[0];
