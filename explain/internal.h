/* explain/internal.h - helpers the attribution methods share. */
#ifndef VERSUS_EXPLAIN_INTERNAL_H
#define VERSUS_EXPLAIN_INTERNAL_H

#include "versus/explain.h"
#include "versus/method.h"

#include <math.h>

/* One explained example and what every method needs to know about it. */
typedef struct vs_attr_job {
    const vs_model_fn *m;
    const vs_explain_request *r; /* common inputs: batch, seed, baseline set, segments */
    vs_tensor *x;          /* [1, ...] the row being explained (caller's) */
    vs_tensor *baseline;   /* [1, ...] resolved single baseline (zeros when none given) */
    int64_t target, contrast;
    int64_t dim;           /* elements per example */
    int64_t evaluations;   /* rows passed through the model so far */
    vs_error *err;
    const vs_model_fn *model; /* the caller's model (m wraps it for pairs) */
    vs_tensor *other;      /* pairs with one side explained: the other side's row [1, ...], else NULL */
    /* VS_OUTPUT_LAYER methods: the row's explanation (malloc'd; vs_explain takes it) and its shape
     * [1, ...], the layer's, learnt from the activations the method computes */
    float *layer_out;
    int layer_nd;
    int64_t layer_shape[VS_MAX_DIMS];
} vs_attr_job;

/* Shape [n, <shape of one example>] of the job's input. */
void vs_job_batch_shape(const vs_attr_job *j, int64_t n, int *ndim, int64_t *shape);

/* S for rows xb [B, ...] (no graph); scores[B]. */
vs_status vs_job_scores(vs_attr_job *j, const float *xb, int64_t rows, double *scores);
/* An accelerator: a faster path of one method on models of one kind (the model's module tree root),
 * equal to the method's plain path up to float rounding; the plain path is its tested reference
 * (tests/test_forward_boxes.c, tests/test_path_grads.c compare them on random models of the kind).
 * A method lists its accelerators beside its run (occlusion.c, integrated_gradients.c), each with
 * the one entry point its method calls. */
typedef struct vs_accel {
    vs_module_kind kind;
    bool (*holds)(const vs_module *m); /* NULL: every model of the kind */
    /* occlusion: the outputs for n copies of x [1, C, H, W] whose box i {c0, y0, x0, channels,
     * height, width} = boxes[6i..6i+5] takes fill's values */
    vs_tensor *(*box_outputs)(vs_module *m, vs_tensor *x, vs_tensor *fill, int64_t n, const int64_t *boxes, vs_error *err);
    /* integrated gradients: grad_sum = sum_k w[k] dS/dx at x' + a[k] (x - x') for n points, S =
     * score(sctx, outputs), points in chunks of `chunk`; VS_ERR_ARG when m does not take x this way */
    vs_status (*path_grads)(vs_module *m, vs_tensor *x, vs_tensor *baseline, int64_t n, const double *a, const double *w,
                            vs_tensor *(*score)(void *sctx, vs_tensor *out), void *sctx, int64_t chunk, float *grad_sum, vs_error *err);
} vs_accel;
/* The first of accels[0..n) that holds for the job's model (*m: its module), or NULL: the request
 * asks for the plain path, the row is seen through a pair's wrapper, or none holds. */
const vs_accel *vs_job_accel(const vs_attr_job *j, const vs_accel *accels, int n, vs_module **m);
/* S for n copies of the job's row whose box i (boxes[6i..6i+5] = {c0, y0, x0, channels, height,
 * width}) takes the baseline's values, through accelerator a (box_outputs) on m. */
vs_status vs_job_box_scores(vs_attr_job *j, const vs_accel *a, vs_module *m, int64_t n, const int64_t *boxes, double *scores);
/* grad_sum[dim] = sum_k w[k] dS/dx at x' + a[k] (x - x') through one of accels (path_grads); *used
 * false when none holds (or not for this input): then nothing is done. */
vs_status vs_job_path_grads(vs_attr_job *j, const vs_accel *accels, int n_accels, int64_t n, const double *a, const double *w,
                            float *grad_sum, bool *used);
/* S and dS/dx for rows xb [B, ...]: grads [B*dim] (float), scores [B] (may be NULL). Rows are sent to
 * the model in chunks of r->batch. */
vs_status vs_job_grads(vs_attr_job *j, const float *xb, int64_t rows, float *grads, double *scores);

/* The job's target: want, or the predicted class of its row (argmax of the outputs; 0 for models
 * with one score per row); checks the contrast class. */
vs_status vs_job_resolve_target(vs_attr_job *j, int64_t want);
/* The same from the model's output for the job's row (out [1, C] or [1] / [1, 1]; NULL: the
 * forward failed), already computed (vs_explain batches the rows of a call). */
vs_status vs_job_resolve_target_from(vs_attr_job *j, int64_t want, const vs_tensor *out);
/* The method's options struct (registry.c). */
const void *vs_method_opts_data(const vs_method_opts *o);
/* The choices of a quadrature-rule option, in the order of vs_ig_rule. */
#define VS_IG_RULE_CHOICES "gauss-legendre|left|right|middle|trapezoid"
/* Rows per model call of the job. */
int64_t vs_job_chunk(const vs_attr_job *j);
/* The model error of the last failed op as the job's error. */
vs_status vs_job_model_error(vs_attr_job *j);
/* Integrated gradients of the job's row (steps points of rule): the attributions of the registry's
 * integrated_gradients, shared with DeepLIFT's and Integrated Hessians' tests of completeness. */
vs_status vs_job_integrated_gradients(vs_attr_job *j, int steps, vs_ig_rule rule, float *attr);
/* DeepLIFT (rescale) of the job's row against one baseline row. */
vs_status vs_attr_deeplift(vs_attr_job *j, const float *baseline, float *attr);

/* Features of one example: feature id per element (segments or identity), count. */
typedef struct vs_features {
    int64_t n;             /* number of features (players) */
    int32_t *id;           /* [dim] owned */
} vs_features;
vs_status vs_features_make(const vs_attr_job *j, vs_features *f);
void vs_features_free(vs_features *f);
/* Rows of inputs where feature k is present (z[k] = 1: the input's value) or absent (the baseline's). */
void vs_features_compose(const vs_attr_job *j, const vs_features *f, const uint8_t *z, float *row);
/* Values v(z) of n coalitions (rows of zs, each f->n bytes), each distinct input evaluated once. */
vs_status vs_coalition_values(vs_attr_job *j, const vs_features *f, const uint8_t *zs, int64_t n, double *v);
/* attr[dim]: a feature's value phi[k] shared equally by its elements (sums are kept). */
void vs_features_spread(const vs_attr_job *j, const vs_features *f, const double *phi, float *attr);
/* attr[dim]: every element carries its feature's whole value phi[k] (Captum's feature-mask convention). */
void vs_features_assign(const vs_attr_job *j, const vs_features *f, const double *phi, float *attr);
/* z[m] = a random coalition of exactly s of the m players (scratch[m]). */
void vs_random_subset(vs_rng *r, int64_t m, int64_t s, uint8_t *z, int64_t *scratch);

/* SmoothGrad's noise sigma = noise * (max x - min x) of the job's row (1 when the row is constant). */
double vs_job_noise_sigma(const vs_attr_job *j, float noise);
/* Gradients dS/dx of the job's row with the model recorded under a modified backward rule. */
vs_status vs_job_rule_grads(vs_attr_job *j, vs_backward_rule rule, float *grads);
/* Grad-CAM's map relu(sum_c mean(dS/dA_c) A_c) [h, w] of layer's activation A [1,C,h,w] (layer -1:
 * the last conv2d); *cam malloc'd, the caller frees it. */
vs_status vs_job_gradcam_map(vs_attr_job *j, int layer, float **cam, int64_t *h, int64_t *w);
/* The explained score of model outputs out [n, C] (or [n] / [n, 1] scores) for the job: [n]. */
vs_tensor *vs_job_score_of(const vs_attr_job *j, vs_tensor *out);
/* The layer a layer or neuron method explains (layer_site.c): a module path resolved against the
 * model's module tree; the model split there into head x -> A and tail A -> outputs. */
typedef struct vs_layer_site {
    vs_module *root;
    char path[VS_PARAM_PATH_MAX]; /* resolved (the default filled in) */
    vs_tensor *fixed;             /* a Siamese root: the other side's row [1, ...] (NULL: tails refuse) */
} vs_layer_site;
/* Resolve path ("" = the default: the last conv2d of a sequential or of a Siamese encoder, else its
 * layer before the last); VS_ERR_ARG naming the path and what exists where it stops resolving. */
vs_status vs_layer_site_find(vs_module *root, const char *path, vs_tensor *fixed, vs_layer_site *s, vs_error *err);
/* A(x) for x [n, ...] (current scope; NULL with vs_last_error). */
vs_tensor *vs_layer_site_head(const vs_layer_site *s, vs_tensor *x);
/* The model's outputs for inputs x [n, ...] with the layer's output replaced by a [n, ...]. */
vs_tensor *vs_layer_site_tail(const vs_layer_site *s, vs_tensor *a, vs_tensor *x);
/* A layer's activations for n rows: data [n * adim] (malloc'd, vs_layer_acts_free), one row's shape [1, ...]. */
typedef struct vs_layer_acts {
    float *data;
    int nd;
    int64_t shape[VS_MAX_DIMS];
    int64_t adim;
} vs_layer_acts;
void vs_layer_acts_free(vs_layer_acts *a);
/* For n rows xb: *acts = A(x) and, with gx, gx[n * dim] = dA[neuron]/dx. */
vs_status vs_job_layer_acts(vs_attr_job *j, const vs_layer_site *s, const float *xb, int64_t n, int64_t neuron, vs_layer_acts *acts,
                            float *gx);
/* ga[n * adim] = dS/dA for n activations ab of shape (nd, ashape; ashape[0] ignored) fed to the
 * tail, with inputs xb [n * dim] (NULL: the job's row for every activation). */
vs_status vs_job_tail_grads(vs_attr_job *j, const vs_layer_site *s, int nd, const int64_t *ashape, const float *ab, const float *xb,
                            int64_t n, float *ga);

/* ln C(n, k), for the kernel weights of Shapley estimators and exact binomial tests. */
static inline double log_choose(int64_t n, int64_t k) { return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma((double)(n - k) + 1.0); }

#endif
