/* versus/svae_explain.h - explanations with a supervised VAE (explain/svae_explain.c): invariant
 * samples, class targets and counterfactuals of the SVAE paper (Eq. 9), and the divergence between a
 * latent posterior and that of a changed input as a model the attribution methods explain.  The
 * models and their layout are versus/svae.h's.
 *
 * Ownership: results are tensors owned by the current scope, like op results.
 */
#ifndef VERSUS_SVAE_EXPLAIN_H
#define VERSUS_SVAE_EXPLAIN_H

#include <stdint.h>

#include "versus/dataset.h"
#include "versus/error.h"
#include "versus/explain.h"
#include "versus/nn.h"
#include "versus/svae.h"
#include "versus/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

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
#ifdef __cplusplus
}
#endif
#endif
