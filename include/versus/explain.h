/* versus/explain.h - attribution methods behind one interface.
 *
 * A method takes a model (any differentiable function of a batch), inputs, the explained score and
 * options, and returns attributions of the inputs' shape plus a report of how well its own axioms
 * hold.  The explained score of a row x is
 *     S(x) = f(x)[target] - f(x)[contrast]      (classifier logits; one-vs-one with a contrast)
 *     S(x) = f(x)[target]                      (one-vs-all)
 *     S(x) = f(x)                              (a model that already returns one score per row,
 *                                               e.g. a Siamese similarity to a fixed reference)
 * Ownership: attributions are new tensors owned like any op result (current scope or caller);
 * the model and inputs stay the caller's. */
#ifndef VERSUS_EXPLAIN_H
#define VERSUS_EXPLAIN_H

#include "versus/dataset.h"
#include "versus/nn.h"
#include "versus/ops.h"
#include "versus/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The model seen by explainers. */
typedef struct vs_model_fn {
    /* Outputs for a batch x [N, ...]: logits [N, C], or scores [N] / [N, 1].  Must be built from
     * differentiable ops (the explainers differentiate through it) and must not mix rows (eval mode). */
    vs_tensor *(*forward)(void *ctx, vs_tensor *x);
    /* Optional (Grad-CAM): outputs as above, and *act = the activation after layer `layer`. */
    vs_tensor *(*forward_layer)(void *ctx, vs_tensor *x, int layer, vs_tensor **act);
    void *ctx;
    /* Optional (occlusion): outputs as `forward` for n copies of x [1, C, H, W] whose box i
     * {c0, y0, x0, channels, height, width} = boxes[6i..6i+5] takes fill's values; NULL when the
     * model has no incremental path (see vs_sequential_forward_boxes). */
    vs_tensor *(*forward_boxes)(void *ctx, vs_tensor *x, vs_tensor *fill, int64_t n, const int64_t *boxes);
    /* Optional (integrated gradients): grad_sum = sum_k w[k] dS/dx at x' + a[k] (x - x') for n points,
     * S = score(sctx, outputs), points in chunks of `chunk`; *used = false (nothing done) when the
     * model cannot for this input, and the caller evaluates the points one by one
     * (see vs_sequential_path_grads). */
    vs_status (*path_grads)(void *ctx, vs_tensor *x, vs_tensor *baseline, int64_t n, const double *a, const double *w,
                            vs_tensor *(*score)(void *sctx, vs_tensor *out), void *sctx, int64_t chunk, float *grad_sum,
                            bool *used);
    /* Optional (pairs, versus/method.h): outputs for pairs of rows x [N, ...], r [N, ...] of a model
     * that compares them (a Siamese similarity [N]); NULL for models of one input. */
    vs_tensor *(*forward_pair)(void *ctx, vs_tensor *x, vs_tensor *r);
    /* Optional (LRP, layer and neuron methods): the sequential classifier `forward` runs, whose layers
     * they walk one by one; NULL for other models. */
    vs_module *sequential;
    /* Optional (layer and neuron methods): the module tree `forward` runs (a sequential, a Siamese
     * model or a composite), whose layers they name by path ("3", "encoder.3", "main.2"). */
    vs_module *module;
} vs_model_fn;

/* ---- the legacy interface: a thin layer over the method registry (versus/method.h) ------------ */

/* The methods that existed before the registry, for vs_attr_opts; new methods are only in the registry. */
typedef enum vs_attr_method {
    VS_ATTR_SALIENCY, VS_ATTR_INPUT_X_GRADIENT, VS_ATTR_INTEGRATED_GRADIENTS, VS_ATTR_SMOOTHGRAD,
    VS_ATTR_EXPECTED_GRADIENTS, VS_ATTR_DEEPLIFT, VS_ATTR_DEEPSHAP, VS_ATTR_OCCLUSION, VS_ATTR_GRADCAM,
    VS_ATTR_LIME, VS_ATTR_KERNEL_SHAP, VS_ATTR_SHAPLEY_EXACT, VS_ATTR_COUNT
} vs_attr_method;

typedef enum vs_ig_rule {
    VS_IG_GAUSS_LEGENDRE, VS_IG_LEFT, VS_IG_RIGHT, VS_IG_MIDDLE, VS_IG_TRAPEZOID
} vs_ig_rule;

typedef struct vs_attr_opts {
    vs_attr_method method;
    int64_t target;            /* class of the explained score; -1: the predicted class (per row) */
    int64_t contrast;          /* -1: none (one-vs-all) */
    const vs_tensor *baseline; /* one example [1, ...] (or [...]); NULL = zeros */
    const vs_tensor *baselines;/* a set [B, ...] for deepshap / expected_gradients */
    int steps;                 /* IG: gradient evaluations (default 50) */
    vs_ig_rule ig_rule;
    int samples;               /* smoothgrad / expected gradients / lime / kernel shap budget */
    float noise;               /* smoothgrad: sigma as a fraction of the input range (default 0.15) */
    bool abs;                  /* saliency: magnitude */
    int window[3], stride[3];  /* occlusion, over [C,H,W] (or the trailing dims); 0 = 1 */
    int layer;                 /* gradcam: layer index (-1: the caller's default) */
    const int32_t *segments;   /* lime / kernel shap / exact shapley: feature id of every element of one
                                  example (e.g. superpixels; NULL = every element its own feature) */
    int64_t n_segments;
    float kernel_width;        /* lime: width of the exponential kernel on cosine distance (default 0.25) */
    float ridge;               /* lime: L2 penalty (default 1.0) */
    int batch;                 /* rows per model call for batched evaluations (default 64); occlusion through
                                * forward_boxes sends every window in one call (the hook chunks them itself) */
    uint64_t seed;
} vs_attr_opts;

/* Defaults for every field (target -1, contrast -1, steps 50, Gauss-Legendre, ...). */
void vs_attr_opts_init(vs_attr_opts *o, vs_attr_method method);

typedef struct vs_attr_report {
    double score;              /* S(x) of the (last) explained row */
    double baseline_score;     /* S(x') where a single baseline is used, else NAN */
    double delta;              /* completeness / efficiency gap: sum(attr) - (S(x) - S(x')), NAN if n/a */
    int64_t target;            /* the class explained (after resolving -1) */
    int64_t evaluations;       /* rows passed through the model */
    double seconds;            /* wall time */
} vs_attr_report;

/* Attributions for every row of x [N, ...] (each row explained on its own): vs_explain with the
 * registry's method of the same name, its options taken from o.  report may be NULL; with N > 1 it
 * describes the last row (delta: the largest |delta| over rows). */
vs_status vs_attribute(const vs_model_fn *m, vs_tensor *x, const vs_attr_opts *o, vs_tensor **attr, vs_attr_report *report,
                       vs_error *err);

/* ---- models of the nn module tree --------------------------------------------------------------- */

/* A module seen by the explainers: a classifier (a sequential; outputs are logits) or a pair model
 * (vs_module_compares_pairs: Siamese, or a composite with two inputs) compared with a fixed reference
 * row (outputs are what its head computes).  Both stay the caller's. */
typedef struct vs_module_explainee {
    vs_module *module;
    vs_tensor *reference;  /* pair models: [1, ...] the reference; NULL for classifiers */
} vs_module_explainee;

/* The vs_model_fn of e (forward in evaluation mode; forward_layer for sequential classifiers, where
 * layer -1 means the last conv2d; forward_boxes for sequential classifiers, incremental). */
vs_model_fn vs_model_fn_from_module(vs_module_explainee *e);

/* ---- baselines (GANMEX section 2) ------------------------------------------------------------------ */

typedef enum vs_baseline_kind {
    VS_BASELINE_ZERO,    /* x' = 0 */
    VS_BASELINE_MAX,     /* x' = max(x) everywhere */
    VS_BASELINE_MIN,     /* x' = min(x) everywhere */
    VS_BASELINE_MEAN,    /* x' = mean(x) everywhere */
    VS_BASELINE_BLUR,    /* x' = x blurred by a Gaussian of sigma pixels (per channel, images) */
    VS_BASELINE_UNIFORM, /* x' ~ U[min(x), max(x)] per element (seeded) */
    VS_BASELINE_MDTS     /* x' = the training example of the target class nearest to x in L2 */
} vs_baseline_kind;

/* Name <-> kind ("zero", "max", "min", "mean", "blur", "uniform", "mdts"); -1 / NULL when unknown. */
int vs_baseline_from_name(const char *name);
const char *vs_baseline_name(vs_baseline_kind k);

/* The baseline of one example x (dim = prod(shape) elements; shape [C,H,W] for images, [p] else)
 * into out[dim].  blur uses sigma; uniform draws from r; mdts needs train and target. */
vs_status vs_make_baseline(vs_baseline_kind kind, const float *x, int ndim, const int64_t *shape, float sigma, vs_rng *r,
                           const vs_dataset *train, int64_t target, float *out, vs_error *err);

/* Class-targeted baseline set (GANMEX; the targeted variant of expected gradients): up to k training
 * examples of class target, drawn without replacement from r.  A new tensor [m, ...]. */
vs_status vs_class_baselines(const vs_dataset *train, int64_t target, int64_t k, vs_rng *r, vs_tensor **out, vs_error *err);

/* GANMEX baselines: b_i = G(x_i, targets[i]) for every row of x [N, ...] from a trained conditional
 * generator model gan (a GAN root with a "generator"; its task's prediction with the options opt it
 * was trained with, vs_task_opts_parse), one generator call per distinct target.  A new tensor [N, ...]
 * owned by the caller (or the current scope). */
vs_status vs_generator_baselines(vs_module *gan, const double *opt, const vs_tensor *x, const int64_t *targets, vs_tensor **out,
                                 vs_error *err);

/* A trained GAN model directory (model.json with a "generator"; `versus train --arch ganmex`) into
 * *gan (the caller's, vs_module_free) and the task options it was trained with (DIR/metrics.json's
 * "task_opts", else the task's defaults) into opt[VS_TASK_MAX_OPTS], for vs_generator_baselines. */
vs_status vs_generator_load(const char *dir, vs_module **gan, double *opt, vs_error *err);

/* Method name <-> enum ("integrated_gradients", ...); -1 / NULL when unknown. */
int vs_attr_method_from_name(const char *name);
const char *vs_attr_method_name(vs_attr_method m);

/* The predicted class of the first row of x (argmax of its logits); -1 when the model returns one
 * score per row (Siamese similarity) or fails.  No gradient is recorded. */
int64_t vs_predicted_class(const vs_model_fn *m, vs_tensor *x);

/* S(x) for every row: [N] (no gradient recorded unless grad mode is on). */
vs_tensor *vs_explained_score(const vs_model_fn *m, vs_tensor *x, int64_t target, int64_t contrast);

/* Nodes and weights of an n-point rule on [0, 1] (Gauss-Legendre: exact for polynomials of degree 2n-1;
 * its nodes cost O(n^2), so n <= VS_GAUSS_LEGENDRE_MAX, 0.1 s; VS_ERR_ARG beyond). */
#define VS_GAUSS_LEGENDRE_MAX 4096
vs_status vs_quadrature(vs_ig_rule rule, int n, double *nodes, double *weights);

/* Exact Shapley values of a game with n <= 24 players given all 2^n coalition values v[mask]. */
vs_status vs_shapley_from_values(int n, const double *v, double *phi);

#ifdef __cplusplus
}
#endif
#endif
