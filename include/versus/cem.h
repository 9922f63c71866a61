/* versus/cem.h - contrastive explanations of a classifier f: pertinent negatives (what, if added,
 * changes the class) and pertinent positives (a minimal part that keeps it).
 *
 *   CEM-MAF (Luss et al., "Generating Contrastive Explanations with Monotonic Attribute Functions"):
 *     PN, Eq. 1, over the latent code z of a data manifold D (a VAE, versus/vae.h):
 *       min_z  gamma sum_i max(g_i(x0) - g_i(D(z)), 0) + beta sum_i |g_i(D(z)) - g_i(x0)|
 *              + c max(f_t0(D(z)) - max_{i != t0} f_i(D(z)), -kappa)
 *              + eta |x0 - D(z)|^2 + nu |z0 - z|^2
 *     by subgradient descent (versus/optimize.h); the PN is the iterate of another class closest to z0
 *     in L2; c starts at c0 and after each run of pn_iters iterations is x10 (no PN yet) or /2 (found),
 *     `searches` runs in all (the supplement: 9 x 1000).
 *     PP, Eq. 2, over a mask m in [0,1] on superpixels (pixels when no segmentation is given):
 *       min_m  gamma sum_i max(g_i(m x0) - g_i(x0), 0) + beta |m|_1 + c max(max_{i != t0} f_i - f_t0, -kappa)
 *     by ISTA (FISTA optional) with the same c search (9 x 100); the valid mask of least L1 norm is
 *     ranked and superpixels are added in that order until f(m x0) predicts t0 again.
 *   CEM (Dhurandhar et al. 2018), pixel space, grayscale in [0,1]: PN x0 + (1 - x0) d and PP x0 d with
 *     d in [0,1] and the elastic net beta |d|_1 + |d|^2, by FISTA; no manifold, no attributes.
 *
 * The paper's attribute sparsity beta |g(D(z))|_1 is written here as beta sum_i |g_i(D(z)) - g_i(x0)|:
 * for attributes with g >= 0 (classifier probabilities, as in the paper's CelebA runs) and the hinge
 * satisfied the two differ by a constant; for signed latent attributes only the second measures the
 * amount added.
 *
 * Attribute functions g_i are monotonic by construction: a latent dimension of the VAE's posterior
 * mean, identity or negated and clamped to a range, or the presence logit of a binary attribute
 * classifier.  Ownership: vs_cem_attrs owns the classifiers it loaded (vs_cem_attrs_clear); the VAE
 * and f are the caller's; results own their arrays (vs_cem_pn_clear, vs_cem_pp_clear). */
#ifndef VERSUS_CEM_H
#define VERSUS_CEM_H

#include <stdbool.h>
#include <stdint.h>

#include "versus/explain.h"
#include "versus/nn.h"
#include "versus/report.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VS_CEM_MAX_ATTRS 16

typedef enum vs_cem_attr_kind { VS_CEM_ATTR_LATENT, VS_CEM_ATTR_CLASSIFIER } vs_cem_attr_kind;

typedef struct vs_cem_attr {
    char name[48];              /* "sleeve length": the text of the explanation ("+sleeve length") */
    vs_cem_attr_kind kind;
    int64_t dim;                /* LATENT: g = sign clamp(mu_dim(x), lo, hi) */
    float sign, lo, hi;
    vs_module *classifier;      /* CLASSIFIER: g = logit of presence (outputs [n,1]: the value, [n,2]: l1 - l0) */
    bool owned;                 /* the classifier was loaded by vs_cem_attrs_parse */
} vs_cem_attr;

typedef struct vs_cem_attrs {
    int n;
    vs_cem_attr a[VS_CEM_MAX_ATTRS];
    vs_module *vae;             /* borrowed: the encoder of LATENT attributes (and the manifold of the PN) */
} vs_cem_attrs;

/* Parse "NAME:+J[:LO:HI],NAME:-J,...,NAME@DIR" (J a latent index, sign + identity / - negated, the
 * range default [-inf, inf]; @DIR a binary attribute classifier loaded from a model directory) into a,
 * with vae for latent attributes (may be NULL when every attribute is a classifier).  VS_ERR_ARG
 * naming the item and what was expected; classifiers loaded are put in evaluation mode. */
vs_status vs_cem_attrs_parse(const char *spec, vs_module *vae, int64_t latent, vs_cem_attrs *a, vs_error *err);
void vs_cem_attrs_clear(vs_cem_attrs *a);  /* free the classifiers it loaded; zero a */
/* g(x) [n, a->n] for images x [n, ...] (differentiable in x).  With codes z [n,k] (may be NULL) of
 * images x = D(z) on the manifold, a latent attribute reads z itself (g = sign clamp(z_dim, lo, hi):
 * the identity map of the paper) instead of re-encoding x. */
vs_tensor *vs_cem_attrs_eval(const vs_cem_attrs *a, vs_tensor *x, vs_tensor *z, vs_error *err);

typedef struct vs_cem_opts {
    float kappa;        /* margin: 5 */
    float gamma;        /* attribute hinge: 100 */
    float beta_pn;      /* attribute sparsity of the PN: 100 */
    float eta, nu;      /* input and latent proximity of the PN: 1, 1 */
    float beta_pp;      /* L1 of the PP mask: 0.1 */
    float c0;           /* first c of the search: 1 */
    int searches;       /* runs of the c search: 9 */
    int pn_iters;       /* subgradient iterations per run: 1000 */
    int pp_iters;       /* ISTA iterations per run: 100 */
    float pn_step;      /* subgradient eta_0 (step k: eta_0 / sqrt(k+1)): 0.05 */
    float pp_step;      /* ISTA step: 0.01 */
    float latent_box;   /* |z_j| <= latent_box during the PN search: 4 */
    bool fista;         /* FISTA momentum for the PP (the paper: ISTA): false */
    float attr_tol;     /* an attribute counts as decreased below g_i(x0) - attr_tol: 0.1 */
} vs_cem_opts;
void vs_cem_opts_init(vs_cem_opts *o);  /* the supplement's values above */

/* One explained image's pertinent negative. */
typedef struct vs_cem_pn {
    bool found;             /* some iterate was classified otherwise than t0 */
    int64_t t0, cls;        /* class of x0 and of the PN (t0 when not found) */
    int64_t k, dim, n_attrs;
    float *z, *x;           /* [k] the PN's code, [dim] D(z) (D(z0) when not found) */
    float *g0, *g;          /* [n_attrs] attributes of x0 and of the PN */
    float latent_dist;      /* |z - z0| */
    float c;                /* c of the run that found it */
    int violations;         /* attributes decreased below g0 - attr_tol */
    bool recon_flips;       /* D(z0) itself is already classified otherwise than t0 */
} vs_cem_pn;
void vs_cem_pn_clear(vs_cem_pn *p);

/* One explained image's pertinent positive. */
typedef struct vs_cem_pp {
    int64_t t0, n_segments, dim;
    float *mask;            /* [n_segments] the relaxed mask the order comes from */
    int32_t *order;         /* [n_segments] segments by decreasing mask */
    int64_t n_features;     /* segments kept: the first n_features of order */
    float *x;               /* [dim] the PP: x0 on the kept segments, 0 elsewhere */
    bool relaxed_valid;     /* the search found a valid relaxed mask (else the last one is ranked) */
    float c;
} vs_cem_pp;
void vs_cem_pp_clear(vs_cem_pp *p);

/* CEM-MAF PNs of the images x0 [N, ...] (one block each, solved together) with the classifier f,
 * the manifold a->vae and the attributes a; pn[N] receive the results. */
vs_status vs_cem_maf_pn(const vs_model_fn *f, const vs_cem_attrs *a, vs_tensor *x0, const vs_cem_opts *o, vs_cem_pn *pn,
                        vs_error *err);
/* PPs of x0 [N, ...]: segments [N * dim] feature ids per element (NULL: every element its own),
 * attributes a (NULL or none: the gamma term is left out, the original CEM's PP objective on masks). */
vs_status vs_cem_maf_pp(const vs_model_fn *f, const vs_cem_attrs *a, vs_tensor *x0, const int32_t *segments,
                        const vs_cem_opts *o, vs_cem_pp *pp, vs_error *err);

/* The original CEM in pixel space: out [N * dim] receives x0 + (1 - x0) d (PN) or x0 d (PP), d by
 * FISTA on c max(+-margin, -kappa) + beta |d|_1 + |d|^2 with the c search; cls[N] (may be NULL) the
 * class of each result. */
vs_status vs_cem_pixel(const vs_model_fn *f, vs_tensor *x0, bool pertinent_negative, const vs_cem_opts *o, float *out,
                       int64_t *cls, vs_error *err);

/* The PN as text: "+sleeve length +heel" (attributes increased by more than attr_tol, largest first;
 * "-waist" for decreases), into buf. */
void vs_cem_pn_text(const vs_cem_attrs *a, const vs_cem_pn *p, float attr_tol, char *buf, size_t n);

/* Prediction scores after each prefix of a feature order: for k = 1..n_order, the softmax
 * probability of class t0 of x0 kept on segments order[0..k) (0 elsewhere): scores[n_order];
 * *first_ok (may be NULL) receives the least k predicting t0 (0: none). */
vs_status vs_cem_prefix_scores(const vs_model_fn *f, const float *x0, int ndim, const int64_t *shape, const int32_t *segments,
                               const int32_t *order, int64_t n_order, int64_t t0, float *scores, int64_t *first_ok,
                               vs_error *err);
/* Spearman correlation of the ranks of scores (1 = highest) with 1..n; NaN for n < 3 or constant scores
 * (the paper's PP correlation: -1 when every feature added raises the confidence). */
double vs_cem_pp_correlation(const float *scores, int64_t n);

/* A PNG picture grid: cells[r * n_cols + j] (NULL: blank) images [c,h,w] in [0,1], each drawn
 * scale x scale per pixel; titles[n_cols] over the columns and captions[n_rows * n_cols] under the
 * cells (either may be NULL, entries may be NULL). */
vs_status vs_cem_grid_png(const float *const *cells, int n_rows, int n_cols, int c, int h, int w, int scale,
                          const char *const *titles, const char *const *captions, const char *path, vs_error *err);

/* ---- the experiment (Tables 1 and 6, Fig. 7) ------------------------------------------------------- */

/* CEM-MAF's Fashion-MNIST evaluation on one subset.  Integers at 0 and floats below 0 take the
 * defaults named. */
typedef struct vs_cem_experiment_opts {
    const char *data;          /* "fashion-mnist-clothes" or "fashion-mnist-shoes" (required) */
    const char *model_dir;     /* trained classifier, or NULL: train cem-fashion on the subset here */
    const char *vae_dir;       /* trained VAE, or NULL: train the DIP-VAE of Table 4 here */
    int64_t train_rows;        /* first rows of the subset's training images used for training: 6000 */
    int64_t clf_epochs;        /* 2 (Adam 1e-3; the paper: SGD 1e-3) */
    int64_t vae_epochs;        /* 10 (Adam 1e-3; the paper: 1e-4) */
    int dip;                   /* DIP-VAE type 1 (i) or 2 (ii): 1 */
    int64_t n_images;          /* first test images of the subset explained: 100 */
    int64_t n_figure;          /* rows of the Fig. 7 grid: 10 */
    const char *attrs;         /* attribute spec (vs_cem_attrs_parse), or NULL: the 4 most active latents */
    int superpixels;           /* SLIC superpixels per image, 0: pixels (the paper's Fashion-MNIST setting) */
    int64_t lime_samples;      /* 1000 */
    int64_t batch;             /* images per PN/PP problem: 25 */
    vs_cem_opts cem;           /* the explainers' hyperparameters */
    uint64_t seed;             /* 1 */
    const char *out_dir;       /* PNGs (traversal.png, figure7.png) go here (created when missing), or NULL */
    const char *command;       /* stamped into the report (with vs_build_commit), or NULL */
    FILE *progress;            /* one line per stage, or NULL */
} vs_cem_experiment_opts;
void vs_cem_experiment_opts_init(vs_cem_experiment_opts *o);
/* Train (or load) the classifier and the DIP-VAE, score the VAE's disentanglement, explain the
 * images with CEM-MAF (PN and PP), LIME and Grad-CAM (and the pixel CEM for the figure), and report
 * Table 6's #PP features, PP accuracy and PP correlation, PN validity, attribute violations and
 * proximity.  Data format "versus-bench-cem/1". */
vs_status vs_cem_experiment(const vs_cem_experiment_opts *o, vs_report **out, vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
