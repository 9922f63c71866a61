/* versus/svae.h - the pieces the supervised VAEs share: the SVAE of "Learning the invariances of a
 * classifier with a supervised VAE" (Eq. 6, latent split z = (z1, z2), Eq. 7) and Kingma et al.'s M2
 * (Eq. 8), their training tasks (nn/task_svae.c, nn/task_m2.c), the invariance experiment
 * (explain/experiment_svae*.c) and `versus explain svae`.
 *
 * Models (built by vs_arch_svae_mlp / vs_arch_m2_mlp, versus/arch.h; any model.json composite with the
 * same value names trains and explains the same way):
 *   svae  inputs "x" (an image) and "y" (one-hot [C]); outputs "class_logits" (f(x) = p(y | z1 = the
 *         mean of q(z1|x)), the first output, so the model is also a plain classifier of x), "mu",
 *         "logvar" (q(z|x,y)), "x_logits" (p(x|z), z ~ q(z|x,y)), "mu_x", "logvar_x" (q(z|x)),
 *         "y_logits" (p(y|z1) of the sample); intermediates "z" (decoder input), "z1", "z2".
 *         The classifier is the child "cls", whose input width is the size of z1.
 *   m2    inputs "x", "y"; outputs "class_logits" (q(y|x)), "mu", "logvar" (q(z|x,y)), "x_logits"
 *         (p(x|y,z)); intermediates "z" and "zy" (the decoder input: z then y).
 *
 * Ownership: results are tensors owned by the current scope, like op results.
 */
#ifndef VERSUS_SVAE_H
#define VERSUS_SVAE_H

#include <stdint.h>

#include "versus/error.h"
#include "versus/explain.h"
#include "versus/report.h"

#include <stdio.h>
#include "versus/nn.h"
#include "versus/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* -log p(x|z) per row for a Bernoulli decoder: sum_j softplus(l_j) - x_j l_j over every element of
 * row i; logits and x hold the same number of elements per row.  [n]. */
vs_tensor *vs_bernoulli_nll_rows(vs_tensor *logits, vs_tensor *x);
/* KL(N(mu1, e^lv1) || N(mu2, e^lv2)) per row, summed over the last dim; mu2/lv2 NULL = N(0, 1).  [n]. */
vs_tensor *vs_kl_diag_gaussian_rows(vs_tensor *mu1, vs_tensor *lv1, vs_tensor *mu2, vs_tensor *lv2);
/* One-hot rows: y[i, labels[i]] = 1, [n, c] (no gradient); NULL when a label is outside [0, c). */
vs_tensor *vs_one_hot(const int64_t *labels, int64_t n, int64_t c);
/* out[i] = argmax_j t[i, j] (the first maximum) for the n rows of t [n, ...]. */
void vs_argmax_rows(const vs_tensor *t, int64_t *out);

/* The latent layout of a model m of task "svae" or "m2": k1 = the classifier's part of the decoder
 * input (SVAE: z1; M2: the class one-hot, C), k2 = the nuisance part (SVAE: z2; M2: z). */
typedef enum vs_svae_kind { VS_SVAE_SVAE, VS_SVAE_M2 } vs_svae_kind;
typedef struct vs_svae_layout {
    vs_svae_kind kind;
    int64_t k1, k2, n_classes;
    int ndim;                    /* x's example shape */
    int64_t shape[3];
} vs_svae_layout;
/* Read m's layout (one forward of a zero example).  VS_ERR_ARG naming what is missing when m is not
 * a composite of task svae or m2 with the value names above. */
vs_status vs_svae_layout_of(vs_module *m, vs_svae_layout *l, vs_error *err);

/* Encode x [n, ...] without labels into the decoder input's two parts: z1 [n, k1] (SVAE: the mean of
 * q(z1|x); M2: the one-hot of argmax q(y|x)) and z2 [n, k2] (the mean of q(z2|x); M2: of
 * q(z|x, y = that class)).  Deterministic. */
vs_status vs_svae_encode(vs_module *m, const vs_svae_layout *l, vs_tensor *x, vs_tensor **z1, vs_tensor **z2, vs_error *err);
/* Decode [z1, z2] into images of x's example shape: sigmoid(p(x|z)) [n, ...]. */
vs_status vs_svae_decode(vs_module *m, const vs_svae_layout *l, vs_tensor *z1, vs_tensor *z2, vs_tensor **x, vs_error *err);
/* The classifier f(x): class logits [n, C] (the first output). */
vs_status vs_svae_classify(vs_module *m, vs_tensor *x, vs_tensor **logits, vs_error *err);
/* Mean and log-variance of q(z_k|x) [n, k_k] for part k = 1 (the classifier's latent) or 2 (the
 * nuisance), for the latent divergence of Eq. 9.  SVAE only (M2's first part is a label). */
vs_status vs_svae_posterior(vs_module *m, const vs_svae_layout *l, vs_tensor *x, int part, vs_tensor **mu, vs_tensor **logvar,
                            vs_error *err);
/* ---- explanations (explain/svae_explain.c) -------------------------------------------------------- */

/* Invariant samples of one image x [1, ...] (Section 3.0.1): decodes of (z1 of x, z2 ~ N(0, sigma^2))
 * drawn from rng, max_draws of them at most, keeping those f classifies as label (label < 0: all)
 * until want are found: *out [*got, ...] (when *got is 0, *out holds one unchecked draw). */
vs_status vs_svae_invariant(vs_module *m, const vs_svae_layout *l, vs_tensor *x, int64_t label, double sigma, int64_t want,
                            int64_t max_draws, vs_rng *rng, vs_tensor **out, int64_t *got, vs_error *err);
/* Where counterfactuals put z1 (Section 3.1.2), [C, k1]: SVAE, the mean of q(z1|x) over the images of
 * each class among the first n_max rows of d (a class without images gets 0); M2, the one-hot of each
 * class (d unused, may be NULL). */
vs_status vs_svae_class_targets(vs_module *m, const vs_svae_layout *l, const vs_dataset *d, int64_t n_max, vs_tensor **out,
                                vs_error *err);
/* One counterfactual per class of x [1, ...]: decodes of (targets[c], z2 of x): [C, ...]. */
vs_status vs_svae_counterfactuals(vs_module *m, const vs_svae_layout *l, vs_tensor *x, vs_tensor *targets, vs_tensor **out,
                                  vs_error *err);

/* The latent divergence of Eq. 9 as an explained function: */

/* d(x, x~) = KL(q(z_k|x) || q(z_k|x~)) as a function of x~ with x fixed: a vs_model_fn whose forward
 * maps x~ [N, ...] to [N, 1].  The divergence holds the model (borrowed) and q(z_k|x) (owned). */
typedef struct vs_svae_divergence {
    vs_module *m;
    vs_svae_layout layout;
    int part;
    vs_tensor *mu, *logvar;      /* [1, k] of the fixed x */
} vs_svae_divergence;
/* Fix x (one example [1, ...]) and the part k (1 or 2). */
vs_status vs_svae_divergence_init(vs_svae_divergence *d, vs_module *m, const vs_svae_layout *l, vs_tensor *x, int part,
                                  vs_error *err);
void vs_svae_divergence_clear(vs_svae_divergence *d);
vs_model_fn vs_svae_divergence_fn(vs_svae_divergence *d);
/* ---- the paper's experiments (explain/experiment_svae*.c) ------------------------------------------ */

/* Table 1, Figs. 2-7 on one data set: SVAE over (alpha, beta) in {alpha1, alpha2} x {beta1, beta2} and
 * M2 over {alpha1, alpha2}, all for `epochs` (and the SVAE grid again for time_epochs), trained on
 * `train` and evaluated on `test`; the invariance test; the explanations of one test image by the
 * SVAE with (alpha2, beta2) at equal epochs.  Zero / negative fields take the
 * defaults of vs_svae_experiment_opts_init. */
typedef struct vs_svae_experiment_opts {
    const char *spec;            /* data set name shown in the report (required) */
    int64_t seed;                /* run r uses seed + r (default 1) */
    int64_t runs;                /* trainings per setting (default 1) */
    int64_t train_rows;          /* train on the first N rows (default 10000, mnist-train's size; 0: all) */
    int64_t epochs;              /* default 8 */
    int64_t time_epochs;         /* > 0: the SVAE grid is trained a second time for this many epochs, the
                                    equal-time budget (M2's Eq. 8 decodes every class, so an M2 epoch costs
                                    about C + 1 SVAE epochs); 0: equal epochs only */
    int64_t batch;               /* default 64 */
    double lr;                   /* Adam (default 1e-3) */
    int64_t hidden, z1, z2;      /* default 256, 10, 5 */
    double alpha[2], beta[2];    /* default (60, 6000) and (0.01, 0.9): the paper's MNIST values */
    bool alpha_per_example;      /* false (default): alpha weights the batch MEAN of the classifier's
                                    cross-entropy against the batch SUM of the ELBO terms (PyTorch's default
                                    reductions), so an example's weight is alpha / batch; true: alpha is the
                                    weight per example (the tasks' own option) */
    double unlabelled;           /* M2's unlabelled weight (default 1: Eq. 8 as written; < 0: default) */
    int64_t n_invariance;        /* test rows of the invariance test (default 1000) */
    const char *sigmas;          /* comma-separated (default 0.1,0.25,0.5,1,1.5,2,3,4,5) */
    const char *methods;         /* comma-separated registry names (default expected_gradients,
                                    integrated_gradients,saliency,input_x_gradient) */
    int64_t explain_class;       /* the explained image: the first correctly classified test image of this class (default 3) */
    int64_t n_divergence;        /* test rows of the divergence and counterfactual statistics (default 200) */
    const char *image_dir;       /* the PNG figures (Figs. 3-7) are written here, or NULL */
    const char *tag, *command, *commit; /* stamped into the report, or NULL */
    FILE *progress;              /* one line per stage, or NULL */
} vs_svae_experiment_opts;
void vs_svae_experiment_opts_init(vs_svae_experiment_opts *o);
/* Run it; *out receives the report (data format "versus-bench-svae/1": models with accuracy and
 * reconstruction per (alpha, beta), labels_kept and diversity per model and sigma, divergences,
 * counterfactual success, command, commit; figures labels_kept, diversity). */
vs_status vs_svae_experiment(const vs_dataset *train, const vs_dataset *test, const vs_svae_experiment_opts *o, vs_report **out,
                             vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
