/* nn/gan_internal.h - the GAN engine the "gan" and "ganmex" tasks share (not installed): the state of
 * a run, one training step, evaluation, sample grids and prediction (task_gan.c).  The two tasks differ
 * in where the generator's class term comes from (the critic's "cls" head, D_cls, or a frozen
 * classifier S: GANMEX Eq. 9), in the L1 similarity term lambda_sim |x - G(x, c)| and in their
 * defaults; their option tables start with the same six options in the order of the enum below. */
#ifndef VERSUS_NN_GAN_INTERNAL_H
#define VERSUS_NN_GAN_INTERNAL_H

#include "nn/train_internal.h"

/* Options shared by both tasks: r->opt[VS_GAN_OPT_*]. */
enum { VS_GAN_OPT_LOSS, VS_GAN_OPT_N_CRITIC, VS_GAN_OPT_LAMBDA_GP, VS_GAN_OPT_LAMBDA_CLS, VS_GAN_OPT_LAMBDA_REC, VS_GAN_OPT_RANGE,
       VS_GAN_N_OPTS };
enum { VS_GAN_LOSS_WGAN_GP, VS_GAN_LOSS_NS };
enum { VS_GAN_RANGE_01, VS_GAN_RANGE_TANH };
extern const char *const vs_gan_loss_choices[], *const vs_gan_range_choices[];
/* The six shared option definitions with the given defaults (a task's table starts with them). */
#define VS_GAN_OPT_DEFS(n_critic, lambda_cls, lambda_rec, range)                                                           \
    {"loss", VS_GAN_LOSS_WGAN_GP, 0, 1, vs_gan_loss_choices, "wgan-gp (Wasserstein with gradient penalty) or ns (non-saturating)"}, \
    {"n_critic", n_critic, 1, 1000, NULL, "critic steps per generator step"},                                              \
    {"lambda_gp", 10, 0, 1e6, NULL, "weight of the gradient penalty (0: none)"},                                          \
    {"lambda_cls", lambda_cls, 0, 1e6, NULL, "conditional: weight of the classification terms"},                          \
    {"lambda_rec", lambda_rec, 0, 1e6, NULL, "conditional: weight of the reconstruction (cycle) term"},                   \
    {"range", range, 0, 1, vs_gan_range_choices, "01: images as they are; tanh: mapped to [-1,1] for a tanh generator"}

/* Loss terms: both tasks report the first six in this order; ganmex adds g_sim. */
enum { VS_GAN_T_D, VS_GAN_T_G, VS_GAN_T_GP, VS_GAN_T_DCLS, VS_GAN_T_GCLS, VS_GAN_T_GREC, VS_GAN_T_GSIM };

typedef struct vs_gan_state {
    vs_module *g, *d;
    vs_module *judge;             /* GANMEX: the frozen classifier S (evaluation mode, never updated), or NULL */
    bool conditional;             /* G(x, c) */
    bool has_cls;                 /* the critic has "cls" */
    bool critic_cls;              /* D_cls trained on real labels and the generator's class term from it;
                                     false with a judge: the class term is CE(S(G(x, c')), c') */
    double lambda_sim;            /* weight of mean |G(x, c') - x| in the generator's loss (0: none) */
    int64_t z_ndim, z_shape[VS_MAX_DIMS]; /* unconditional: one example of z */
    int64_t *labels, *targets;    /* [batch] */
} vs_gan_state;

/* r->state = a new vs_gan_state for r's root ("generator", "critic"), critic_cls = has_cls, no judge. */
vs_status vs_gan_init(vs_task_run *r, vs_error *err);
void vs_gan_clear(vs_task_run *r);
vs_status vs_gan_step(vs_task_run *r, const int64_t *rows, int64_t n, double *terms, vs_error *err);
/* Critic scores on real and generated test images, class accuracies of D_cls; with a judge also
 * "target_class_rate" (share of G(x, c') that S classifies as c') and "baseline_l2" (mean |G(x, c') - x|_2). */
vs_status vs_gan_evaluate(vs_task_run *r, vs_train_result *res, vs_error *err);
vs_status vs_gan_sample(vs_task_run *r, vs_rng *rng, vs_tensor **out, int *rows, int *cols, vs_error *err);
vs_status vs_gan_predict(vs_module *m, const double *opt, vs_tensor *x, int64_t cls, vs_tensor **y, vs_error *err);

#endif
