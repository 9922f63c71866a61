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

#ifdef __cplusplus
}
#endif
#endif
