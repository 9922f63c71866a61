/* versus/evaluate.h - how good are given attributions of a saved model?  `versus evaluate` as one
 * library call: load the model and the arrays, score every row (metrics.h), and return a report.
 *
 * Feature attributions A (the shape of X) are scored per row by the faithfulness, complexity,
 * localisation, robustness, randomisation and axiom metrics of metrics.h; interactions G [N, F, F]
 * by completeness (sum G = S(x) - S(x')).  The result is a vs_report whose data object is the
 * evaluation's summary, member by member what `versus evaluate --out` writes (docs/formats/outputs.md):
 *   features:     rows, aopc_steps, per_step, replace, then per metric {mean, std, per_row} (null where
 *                 a metric does not apply), cascading_randomization (with a cascade method) and
 *                 mean_perturbation_curve;
 *   interactions: output ("interactions"), attributions, rows, features, side, completeness
 *                 {largest_gap, mean_abs_gap, direction}, main_effect_share, query_reference_share, gaps.
 * Its blocks are a table of the metrics' means and the mean perturbation curve (features), or the
 * interactions report of experiment.h (a table per row and the matrices of the first rows).
 *
 * Ownership: the options only borrow their strings; *out is the caller's (vs_report_free). */
#ifndef VERSUS_EVALUATE_H
#define VERSUS_EVALUATE_H

#include "versus/method.h"
#include "versus/report.h"
#include "versus/shard.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vs_evaluate_opts {
    const char *model;          /* model directory or .onnx file (required) */
    const char *input;          /* X.npy [N, ...] (required) */
    const char *attributions;   /* A.npy, the shape of X, or interactions [N, F, F] (required) */
    const char *reference;      /* pair models: R.npy, one row [1, ...] (interactions: or one per row); NULL */
    int64_t target;             /* explained class (an element of a flattened output [N, ...]); -1: the predicted class */
    const char *targets;        /* T.npy [N]: row i's target, or NULL (then target) */
    const char *target_mask;    /* M.npy [1 or N, <output row>]: the explained score is S = sum m f(x), or NULL */
    const char *score;          /* "sum", "norm" or "reconstruction": that scalar of the output row is S, or NULL */
    int64_t contrast;           /* one-vs-one: S_target - S_contrast; -1: none */
    vs_side side;               /* interactions of pairs: the side they explain (VS_SIDE_QUERY) */
    /* feature attributions only (interactions refuse values other than these defaults) */
    const char *replace;        /* a flipped feature becomes: NULL or "zero" (0, the default), "one-minus" (1 - x), or FILE.npy [1, ...] */
    int64_t per_step;           /* features flipped per perturbation-curve point: 1 */
    int64_t aopc_steps;         /* L of AOPC_L: 100 */
    int64_t edge;               /* inverse localisation's edge bands in pixels; 0: W/7 rounded up */
    const char *cascade;        /* cascading randomisation with this feature method of the registry, or NULL */
    const char *mask;           /* localisation: ground truth M.npy, one row or one per row (non-zero = inside), or NULL */
    const char *mask_data;      /* localisation: the planted mask of a synthetic data spec (vs_load_spec), or NULL */
    int64_t top_k;              /* top-k intersection's k: 1000 (at most the features) */
    const char *method;         /* robustness, random logit, input invariance: re-explain with this method (its defaults), or NULL */
    int64_t samples;            /* robustness: perturbations per row: 10 */
    double radius;              /* max-/average-sensitivity: uniform noise radius: 0.2 */
    double lipschitz_sigma;     /* local Lipschitz: Gaussian noise sigma: 0.1 */
    double input_shift;         /* input invariance: the constant added to the inputs: -1 */
    double eps;                 /* zero threshold of effective complexity and non-sensitivity: 1e-5 */
    uint64_t seed;              /* row i's perturbation noise from vs_item_seed(seed, i); the cascade from seed: 0 */
    const char *heatmaps;       /* write a PNG grid of the first 16 rows (input, overlay, heatmap) here, or NULL */
    const char *curves;         /* write the mean perturbation curve as SVG here, or NULL */
    const vs_run_opts *run;     /* journal the rows (versus/shard.h) for --resume and shards; NULL: in memory */
    vs_run **journal;           /* with run: receives the open run, which the caller finishes (vs_run_finish)
                                   once its own files are written, then frees; NULL: finished here */
} vs_evaluate_opts;

/* The defaults above (the ones `versus help evaluate` documents); the three paths NULL. */
void vs_evaluate_opts_init(vs_evaluate_opts *o);

/* Score the attributions of o (see the top of this file) into *out; with a sharded run its rows are
 * journalled and *out is NULL (vs_run_merge joins the shards).  Errors name the file or option:
 * VS_ERR_ARG for options that do not fit each other or the attributions (a usage error), other codes
 * for files that cannot be read or do not fit the model. */
vs_status vs_evaluate(const vs_evaluate_opts *o, vs_report **out, vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
