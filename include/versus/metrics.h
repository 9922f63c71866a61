/* versus/metrics.h - how good is an attribution map?  GANMEX section 4.1 and appendix C.
 *
 * All functions read the caller's arrays and return numbers; curves are malloc'd arrays the caller
 * frees with free().  Scores are the explained score S of explain.h (target, optional contrast). */
#ifndef VERSUS_METRICS_H
#define VERSUS_METRICS_H

#include "versus/explain.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vs_perturb_opts {
    int64_t target, contrast;   /* explained score (target must be resolved, >= 0 for classifiers) */
    const vs_tensor *replace;   /* [1, ...] values flipped features take; NULL: 1 - x (inputs in [0,1]) */
    int64_t per_step;           /* features flipped per curve point (default 1) */
    int batch;                  /* rows per model call (default 64) */
} vs_perturb_opts;

void vs_perturb_opts_init(vs_perturb_opts *o);

/* curve[k] = S(x with the k * per_step highest-attributed features flipped), k = 0..n_points-1,
 * the last point having every feature flipped (Bach et al. 2015; Samek et al. 2017). */
vs_status vs_perturbation_curve(const vs_model_fn *m, const vs_tensor *x, const vs_tensor *attr, const vs_perturb_opts *o,
                                double **curve, int64_t *n_points, vs_error *err);
/* AOPC_L = 1/(L+1) sum_{k=0..L} (curve[0] - curve[k]); L < 0 or past the end: all points. */
double vs_aopc(const double *curve, int64_t n_points, int64_t L);
/* Gini index of |a| (Hurley & Rickard; Chalasani et al. 2018): 0 uniform, -> 1 sparse. */
double vs_gini(const float *a, int64_t n);
/* Single-feature effects e_i = S(x) - S(x with feature i replaced); faithfulness = Pearson(a, e)
 * (Alvarez-Melis & Jaakkola 2018), monotonicity = Spearman(|a|, |e|) (Nguyen & Martinez 2020). */
vs_status vs_faithfulness_monotonicity(const vs_model_fn *m, const vs_tensor *x, const vs_tensor *attr, const vs_perturb_opts *o,
                                       double *faithfulness, double *monotonicity, vs_error *err);
/* Mean |a| over the left and right `edge` columns divided by mean |a| over the centre columns, for
 * maps [C,H,W] (GANMEX appendix C: lower = more localised). */
double vs_inverse_localization(const float *a, int64_t c, int64_t h, int64_t w, int64_t edge);
/* e[i] = S(x) - S(x with feature i replaced) for every element i of x [1, ...] (e: x->size values). */
vs_status vs_single_feature_effects(const vs_model_fn *m, const vs_tensor *x, const vs_perturb_opts *o, double *e, vs_error *err);
double vs_pearson(const double *x, const double *y, int64_t n);
double vs_spearman(const double *x, const double *y, int64_t n); /* ties get their mean rank */
/* SSIM of two maps [h,w] after scaling each |map| to [0,1] by its maximum (7x7 windows, K1 .01, K2 .03). */
double vs_ssim(const float *a, const float *b, int64_t h, int64_t w);

/* Cascading randomisation (Adebayo et al. 2018): layers[k] lists the parameter tensors of layer k,
 * ordered from the output layer down.  For k = 0.., layer k's weights are redrawn as Gaussians
 * scaled to the same norm (cumulatively), attribute() recomputes the map, and rank[k] (Spearman of
 * |maps|) and ssim[k] compare it with the original.  Weights are restored before returning. */
typedef vs_status (*vs_attribute_cb)(void *ctx, vs_tensor **attr);
vs_status vs_cascading_randomization(vs_tensor *const *const *layers, const int *n_params, int n_layers, vs_attribute_cb attribute,
                                     void *ctx, int64_t map_h, int64_t map_w, vs_rng *r, double *rank, double *ssim, vs_error *err);

/* ---- the Quantus families (Hedström et al. 2023); one row at a time, maps of n values ------------ */

/* Complexity (metrics_complexity.c).  Sparseness (Chalasani et al. 2020) is vs_gini. */
double vs_complexity(const float *a, int64_t n);                      /* -sum p ln p, p = |a| / sum |a| (Bhatt et al. 2020) */
int64_t vs_effective_complexity(const float *a, int64_t n, double eps); /* #{i: |a_i| > eps} (Nguyen & Martinez 2020) */

/* Localisation against a ground-truth mask s (s[i] != 0: inside); NAN when s is empty
 * (metrics_localisation.c). */
double vs_pointing_game(const float *a, const uint8_t *s, int64_t n);    /* 1 if a maximum of a lies in s (Zhang et al. 2018) */
double vs_relevance_mass(const float *a, const uint8_t *s, int64_t n);   /* sum_s a / sum a (Arras et al. 2022) */
double vs_relevance_rank(const float *a, const uint8_t *s, int64_t n);   /* share of the |s| highest a inside s (Arras et al. 2022) */
double vs_top_k_intersection(const float *a, const uint8_t *s, int64_t n, int64_t k); /* share of the k highest a inside s (Theiner et al. 2022) */
double vs_localisation_auc(const float *a, const uint8_t *s, int64_t n); /* ROC AUC of a as a score for s (Fawcett 2006), ties counted half */

/* An explainer for the metrics that re-explain: attr[x->size] = the explanation of row x [1, ...] for class target. */
typedef vs_status (*vs_explain_cb)(void *ctx, vs_tensor *x, int64_t target, float *attr, vs_error *err);

/* Robustness (metrics_robustness.c), over `samples` perturbations of x drawn from r:
 * max- and average-sensitivity (Yeh et al. 2019): ||A(x + d) - A(x)||_2 / ||A(x)||_2, d ~ U(-radius, radius)
 * per element; local Lipschitz estimate (Alvarez-Melis & Jaakkola 2018): max ||A(x + d) - A(x)||_2 / ||d||_2,
 * d ~ N(0, sigma^2).  attr = A(x). */
vs_status vs_sensitivity(vs_explain_cb explain, void *ctx, vs_tensor *x, const float *attr, int64_t target, double radius, int samples,
                         vs_rng *r, double *max_sens, double *avg_sens, vs_error *err);
vs_status vs_local_lipschitz(vs_explain_cb explain, void *ctx, vs_tensor *x, const float *attr, int64_t target, double sigma, int samples,
                             vs_rng *r, double *lle, vs_error *err);

/* Randomisation (metrics_axioms.c): random logit (Sixt et al. 2020): SSIM of A(x) for target and for a
 * class drawn uniformly from the n_classes - 1 others, the maps as [map_h, map_w] (channels summed);
 * lower = the explanation depends more on the class. */
vs_status vs_random_logit(vs_explain_cb explain, void *ctx, vs_tensor *x, const float *attr, int64_t target, int64_t n_classes,
                          int64_t map_h, int64_t map_w, vs_rng *r, double *ssim, vs_error *err);
/* Axioms (metrics_axioms.c).  Non-sensitivity (Nguyen & Martinez 2020): the number of features whose
 * attribution is zero (|a| < eps) while replacing them moves S by eps or more, or whose attribution is
 * non-zero while replacing them does not (0 = no violation). */
vs_status vs_non_sensitivity(const vs_model_fn *m, const vs_tensor *x, const float *attr, const vs_perturb_opts *o, double eps,
                             int64_t *violations, vs_error *err);
/* Input invariance (Kindermans et al. 2019): 1 when A(x) equals, within atol, the explanation a_shift of
 * x + c by the model whose first layer absorbs the shift (f'(x + c) = f(x)), else 0. */
double vs_input_invariance(const float *a, const float *a_shift, int64_t n, double atol);
/* Input invariance of row x [1, ...] with its map a: vs_input_invariance (atol 1e-4) of a against
 * explain's map of x + shift on m, while module model (m's: a sequential, or a Siamese model's
 * "encoder") has its first linear or conv2d layer's bias rewritten to b - shift W 1 (restored
 * after).  NAN when that layer has no bias, when the shifted model's S(x + shift) differs from S(x)
 * (a zero-padded conv does not absorb a shift exactly), or when explain fails (its message in err). */
double vs_input_invariance_shift(const vs_model_fn *m, vs_module *model, vs_explain_cb explain, void *ctx, vs_tensor *x, const float *a,
                                 int64_t target, int64_t contrast, double shift, vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
