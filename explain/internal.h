/* explain/internal.h - helpers the attribution methods share. */
#ifndef VERSUS_EXPLAIN_INTERNAL_H
#define VERSUS_EXPLAIN_INTERNAL_H

#include "versus/explain.h"

/* One explained example and what every method needs to know about it. */
typedef struct vs_attr_job {
    const vs_model_fn *m;
    const vs_attr_opts *o;
    vs_tensor *x;          /* [1, ...] the row being explained (caller's) */
    vs_tensor *baseline;   /* [1, ...] resolved single baseline (zeros when none given) */
    int64_t target, contrast;
    int64_t dim;           /* elements per example */
    int64_t evaluations;   /* rows passed through the model so far */
    vs_error *err;
} vs_attr_job;

/* Shape [n, <shape of one example>] of the job's input. */
void vs_job_batch_shape(const vs_attr_job *j, int64_t n, int *ndim, int64_t *shape);

/* S for rows xb [B, ...] (no graph); scores[B]. */
vs_status vs_job_scores(vs_attr_job *j, const float *xb, int64_t rows, double *scores);
/* S for n copies of the job's row whose box i (boxes[6i..6i+5] = {c0, y0, x0, channels, height,
 * width}) takes the baseline's values, through the model's forward_boxes (which must be set). */
vs_status vs_job_box_scores(vs_attr_job *j, int64_t n, const int64_t *boxes, double *scores);
/* grad_sum[dim] = sum_k w[k] dS/dx at x' + a[k] (x - x') through the model's path_grads hook;
 * *used false when the model has none (or not for this input): then nothing is done. */
vs_status vs_job_path_grads(vs_attr_job *j, int64_t n, const double *a, const double *w, float *grad_sum, bool *used);
/* S and dS/dx for rows xb [B, ...]: grads [B*dim] (float), scores [B] (may be NULL). Rows are sent to
 * the model in chunks of o->batch. */
vs_status vs_job_grads(vs_attr_job *j, const float *xb, int64_t rows, float *grads, double *scores);

/* Methods: write attributions of one example into attr[dim]; set *delta_ok when the method has a
 * completeness/efficiency property against the job's baseline. */
vs_status vs_attr_gradient_methods(vs_attr_job *j, float *attr);
vs_status vs_attr_integrated_gradients(vs_attr_job *j, float *attr);
vs_status vs_attr_smoothgrad(vs_attr_job *j, float *attr);
vs_status vs_attr_expected_gradients(vs_attr_job *j, float *attr);
vs_status vs_attr_deeplift(vs_attr_job *j, const float *baseline, float *attr);
vs_status vs_attr_deepshap(vs_attr_job *j, float *attr);
vs_status vs_attr_occlusion(vs_attr_job *j, float *attr);
vs_status vs_attr_gradcam(vs_attr_job *j, float *attr);
vs_status vs_attr_lime(vs_attr_job *j, float *attr);
vs_status vs_attr_kernel_shap(vs_attr_job *j, float *attr);
vs_status vs_attr_shapley_exact(vs_attr_job *j, float *attr);

/* Features of one example: feature id per element (segments or identity), count. */
typedef struct vs_features {
    int64_t n;             /* number of features (players) */
    int32_t *id;           /* [dim] owned */
} vs_features;
vs_status vs_features_make(const vs_attr_job *j, vs_features *f);
void vs_features_free(vs_features *f);
/* Rows of inputs where feature k is present (z[k] = 1: the input's value) or absent (the baseline's). */
void vs_features_compose(const vs_attr_job *j, const vs_features *f, const uint8_t *z, float *row);

#endif
