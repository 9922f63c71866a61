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
    void *ctx;
    /* Optional (pairs, versus/method.h): outputs for pairs of rows x [N, ...], r [N, ...] of a model
     * that compares them (a Siamese similarity [N]); NULL for models of one input. */
    vs_tensor *(*forward_pair)(void *ctx, vs_tensor *x, vs_tensor *r);
    /* Optional (LRP, Grad-CAM): the sequential classifier `forward` runs in evaluation mode, whose
     * layers they walk one by one; NULL for other models. */
    vs_module *sequential;
    /* Optional (layer and neuron methods, accelerators): the module tree `forward` runs in evaluation
     * mode (a sequential, a Siamese model or a composite), whose layers they name by path ("3",
     * "encoder.3", "main.2"), and on whose kind a method's accelerators run (explain/internal.h). */
    vs_module *module;
} vs_model_fn;

/* Quadrature rules of a path integral (integrated gradients' `ig-rule`, vs_quadrature). */
typedef enum vs_ig_rule {
    VS_IG_GAUSS_LEGENDRE, VS_IG_LEFT, VS_IG_RIGHT, VS_IG_MIDDLE, VS_IG_TRAPEZOID
} vs_ig_rule;

/* What vs_explain (versus/method.h) reports of a call. */
typedef struct vs_attr_report {
    double score;              /* S(x) of the (last) explained row */
    double baseline_score;     /* S(x') where a single baseline is used, else NAN */
    double delta;              /* completeness / efficiency gap: sum(attr) - (S(x) - S(x')), NAN if n/a */
    int64_t target;            /* the class explained (after resolving -1) */
    int64_t evaluations;       /* rows passed through the model */
    double seconds;            /* wall time */
} vs_attr_report;

/* ---- models of the nn module tree --------------------------------------------------------------- */

/* A module seen by the explainers: a classifier (a sequential; outputs are logits) or a pair model
 * (vs_module_compares_pairs: Siamese, or a composite with two inputs) compared with a fixed reference
 * row (outputs are what its head computes).  Both stay the caller's. */
typedef struct vs_module_explainee {
    vs_module *module;
    vs_tensor *reference;  /* pair models: [1, ...] the reference; NULL for classifiers */
} vs_module_explainee;

/* The vs_model_fn of e (forward in evaluation mode; sequential for sequential classifiers; module =
 * e->module). */
vs_model_fn vs_model_fn_from_module(vs_module_explainee *e);

/* ---- what of a model's outputs is explained ------------------------------------------------------ */

/* Outputs that are not logits (an autoencoder's image, a segmentation map): --target then indexes
 * the flattened output row (any [N, ...] output is [N, D] to the explainers), or one of these
 * scalars of the output row f = f(x) [D] is explained instead. */
typedef enum vs_output_reduce {
    VS_REDUCE_SUM = 1,        /* S(x) = sum_j f_j */
    VS_REDUCE_NORM,           /* S(x) = ||f||_2 = sqrt(sum_j f_j^2) */
    VS_REDUCE_RECONSTRUCTION, /* S(x) = ||f - x||^2 = sum_j (f_j - x_j)^2; f has x's size (an autoencoder's error) */
    VS_REDUCE_MASK            /* S(x) = sum_j m_j f_j: a region (m in {0, 1}) or weighting of the output */
} vs_output_reduce;

typedef struct vs_output_score {
    vs_model_fn inner;        /* the model (borrowed) */
    vs_output_reduce reduce;
    const float *mask;        /* VS_REDUCE_MASK: the weights m of one output row (borrowed; may change between rows) */
    int64_t mask_size;        /* D */
} vs_output_score;

/* The model S(x) of s: forward gives one score per row [N] (forward_pair too, for pair models);
 * no module or sequential, so layer, LRP and Grad-CAM methods refuse it.  s stays the caller's and
 * must outlive the result. */
vs_model_fn vs_model_fn_scored(vs_output_score *s);
/* "sum", "norm", "reconstruction" as their vs_output_reduce; -1 for other names. */
int vs_output_reduce_from_name(const char *name);

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
