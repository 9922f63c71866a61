/* explain/evaluate_internal.h - what the parts of vs_evaluate share (versus/evaluate.h): the loaded
 * model and arrays, and the two paths (feature attributions, interactions).  Private to explain/. */
#ifndef VERSUS_EVALUATE_INTERNAL_H
#define VERSUS_EVALUATE_INTERNAL_H

#include "explain/output_choice.h"
#include "versus/evaluate.h"
#include "versus/explain.h"
#include "versus/nn.h"

/* One evaluation's inputs, owned by vs_evaluate (eval_inputs_free). */
typedef struct eval_inputs {
    vs_module *model;
    vs_module_explainee ex;
    vs_model_fn fn;                  /* over ex, or the scalar of its outputs oc chose */
    vs_output_choice oc;
    vs_tensor *x, *attr, *reference; /* X [N, ...], A, R [1 or N, ...] or NULL */
    vs_tensor *replace;              /* replace FILE.npy [1, ...], or NULL */
    bool zero_replace;
    uint8_t *mask;                   /* localisation truth: [mask_rows * dim] (non-zero = inside), or NULL */
    int64_t mask_rows;
    const vs_method *re_method;      /* o->method, or NULL */
    const vs_method *cascade_method; /* o->cascade, or NULL */
} eval_inputs;

/* Per-row metrics of feature attributions: the summary's columns in order, then the mean curve. */
enum {
    EVAL_AOPC_L, EVAL_AOPC_ALL, EVAL_GINI, EVAL_FAITH, EVAL_MONO, EVAL_LOC,
    EVAL_COMPLEXITY, EVAL_EFFECTIVE, EVAL_NONSENS, EVAL_POINTING, EVAL_MASS, EVAL_RANK, EVAL_TOPK, EVAL_AUC,
    EVAL_MAXSENS, EVAL_AVGSENS, EVAL_LIPSCHITZ, EVAL_LOGIT, EVAL_INVARIANCE,
    EVAL_N_METRICS
};
extern const char *const eval_metric_names[EVAL_N_METRICS];

typedef struct eval_scores {
    int64_t n;                    /* rows */
    double *col[EVAL_N_METRICS];  /* [n] each; NaN where a metric does not apply or is not asked for */
    int64_t n_points;             /* points of a perturbation curve: ceil(dim / per_step) + 1 */
    double *mean_curve;           /* [n_points] */
    int64_t target;               /* the last row's explained class (the cascade explains the first row for it) */
    int n_layers;                 /* cascade: layers, output first */
    double cascade_rank[64], cascade_ssim[64];
    bool part;                    /* a shard: rows journalled, nothing to report */
} eval_scores;

/* Score every row of in's feature attributions (evaluate_rows.c), through o->run's journal when
 * given; *run receives it open (NULL without o->run). */
vs_status eval_rows(const vs_evaluate_opts *o, eval_inputs *in, eval_scores *s, vs_run **run, vs_error *err);
/* Cascading randomisation of the first row's maps by in->cascade_method into s. */
vs_status eval_cascade(const vs_evaluate_opts *o, eval_inputs *in, eval_scores *s, vs_error *err);
void eval_scores_clear(eval_scores *s);
/* Pair models: in->ex.reference becomes a copy of row i's reference (the one row of a single-row
 * reference), owned by the current scope (or the caller) and returned; NULL without a reference. */
vs_tensor *eval_use_reference(eval_inputs *in, int64_t i);
/* Mean and sample standard deviation of the non-NaN values of v (NaN when there are none / one). */
void eval_stats(const double *v, int64_t n, double *mean, double *sd);

/* Interactions [N, F, F] (evaluate_interactions.c): true when attr is that for x. */
bool eval_is_interactions(const vs_tensor *x, const vs_tensor *attr);
/* Their completeness, main-effect and query-reference shares as the interactions report. */
vs_status eval_interactions(const vs_evaluate_opts *o, eval_inputs *in, vs_report **out, vs_error *err);

#endif
