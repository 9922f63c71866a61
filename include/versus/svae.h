/* versus/svae.h - the pieces the supervised VAEs share: the SVAE of "Learning the invariances of a
 * classifier with a supervised VAE" (Eq. 6, latent split z = (z1, z2), Eq. 7) and Kingma et al.'s M2
 * (Eq. 8), for their training tasks (nn/task_svae.c, nn/task_m2.c), their explanations
 * (versus/svae_explain.h) and the invariance experiment (bench/svae/, versus/experiment.h).  A model
 * header: it knows nothing of explainers or reports.
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
#ifdef __cplusplus
}
#endif
#endif
