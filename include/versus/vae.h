/* versus/vae.h - what a trained VAE (task "vae": a composite "x" -> "mu", "logvar", "x_logits", sample
 * "z") offers besides training: its encoder and decoder as functions, latent traversal grids, and the
 * disentanglement scores of DIP-VAE (Kumar et al. 2018).
 *
 * The VAE module is the caller's (borrowed everywhere; put it in evaluation mode first).  Tensors
 * returned are owned by the current scope; arrays are the caller's. */
#ifndef VERSUS_VAE_H
#define VERSUS_VAE_H

#include <stdint.h>

#include "versus/dataset.h"
#include "versus/error.h"
#include "versus/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* mu = E(x) [n,k] (the posterior mean; differentiable in x). */
vs_tensor *vs_vae_encode(vs_module *vae, vs_tensor *x, vs_error *err);
/* D(z) = sigmoid(decoder(z)) [n, ...] reshaped to one example's shape (ndim, shape; differentiable in z). */
vs_tensor *vs_vae_decode(vs_module *vae, vs_tensor *z, int ndim, const int64_t *shape, vs_error *err);

/* Latent traversal (DIP-VAE / CEM-MAF Figs. 5-6): one row per latent j of dims[0..n_dims) (NULL: all
 * k), `steps` columns: D(z0 + t e_j), t from -range to range, z0 = mu of image x [1, ...] (NULL: z0 = 0).
 * Written as a PNG of the grid (each cell scale x scale pixels per pixel) to path. */
vs_status vs_vae_traversal_png(vs_module *vae, const vs_tensor *x, int ndim, const int64_t *shape, const int64_t *dims,
                               int64_t n_dims, int steps, float range, int scale, const char *path, vs_error *err);

/* Label-free disentanglement of DIP-VAE: C = Cov_x[mu(x)] over rows[0..n) of d (all when rows NULL).
 *   off_diag = sum_{i != j} C_ij^2 / sum_ij C_ij^2   (0: decorrelated aggregated posterior)
 * active[j] (may be NULL, [k]) receives C_jj, the variance of latent j over the data. */
vs_status vs_vae_offdiag_score(vs_module *vae, const vs_dataset *d, const int64_t *rows, int64_t n, double *off_diag,
                               float *active, vs_error *err);

/* Supervised disentanglement against known factors f [n, n_factors] of rows[0..n) of d: for each
 * factor the |Pearson correlation| with every latent's mu; per factor the gap between the largest
 * and the second largest (the "MIG-style" correlation gap), averaged over factors.  best[f] and
 * corr[f] (either may be NULL, [n_factors]) receive the latent most correlated with factor f and
 * that (signed) correlation. */
vs_status vs_vae_factor_score(vs_module *vae, const vs_dataset *d, const int64_t *rows, int64_t n, const float *factors,
                              int64_t n_factors, double *gap, int64_t *best, float *corr, vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
