/* versus/attribute_run.h - `versus attribute` as one library call: load a saved model and inputs,
 * explain every row with a method of the registry (versus/method.h) against its baselines, and
 * return the explanation and a report of the run.
 *
 * Each row i is one vs_explain call: its target (given, or the predicted class), its baseline of the
 * chosen kind (or G(x, c) of a trained GANMEX generator, or a file's row), a baseline set (a file, or
 * K rows of the target class of training data), its superpixels or the feature groups of a mask, and
 * a random stream seeded by vs_item_seed(seed, i), so shards and resumed runs give the same bits.
 * The report's data is what `versus attribute --report` writes (docs/formats/outputs.md): method,
 * output, side, rows [{row, target, score, baseline_score, delta, evaluations, seconds}],
 * largest_delta (null when no method's gap applies), evaluations, seconds; its blocks, a table per row.
 *
 * Ownership: the options borrow their strings and method options; *attr and *out are the caller's
 * (vs_tensor_free, vs_report_free). */
#ifndef VERSUS_ATTRIBUTE_RUN_H
#define VERSUS_ATTRIBUTE_RUN_H

#include "versus/method.h"
#include "versus/report.h"
#include "versus/shard.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vs_attribute_opts {
    const char *model;              /* model directory or .onnx file (required) */
    const char *input;              /* X.npy [N, ...] (required) */
    const vs_method *method;        /* the registry's method (required) */
    const vs_method_opts *method_opts; /* its options, or NULL: its defaults */
    int64_t target;                 /* explained class (of a model with outputs [N, ...]: an element of the flattened
                                       output row); -1: the predicted class (largest output) of each row */
    const char *targets;            /* T.npy [N]: row i's target, or NULL (then target) */
    const char *target_mask;        /* M.npy [1 or N, <output row>]: explain S = sum m f(x) instead, or NULL */
    const char *score;              /* "sum", "norm" or "reconstruction" (||f(x) - x||^2): explain that scalar of the
                                       output row instead (vs_output_reduce), or NULL */
    int64_t contrast;               /* one-vs-one: S_target - S_contrast; -1: none */
    const char *reference;          /* pair models: R.npy, one row [1, ...] or one per row, or NULL */
    vs_side side;                   /* with a reference: query (default), reference or both ([N, 2, ...]) */
    const char *baseline;           /* zero (NULL), max, min, mean, blur, uniform, mdts, gan:DIR or FILE.npy [1, ...] */
    double blur_sigma;              /* blur baseline: Gaussian sigma in pixels: 5 */
    const char *baseline_data;      /* data spec (vs_load_spec) for mdts and class_baselines, or NULL */
    int64_t class_baselines;        /* baseline-set methods: K baselines of the target class of baseline_data; 0: none */
    const char *baselines;          /* baseline-set methods: B.npy [B, ...], or NULL */
    int64_t segments;               /* coalition methods on images: N SLIC superpixels per row as features; 0: none */
    const char *feature_mask;       /* M.npy of one row's elements: each element's group (integers >= 0), or NULL */
    uint64_t seed;                  /* 0 */
    const vs_run_opts *run;         /* the journal of the rows (versus/shard.h; required: a run is resumable) */
    vs_run **journal;               /* receives the open run, which the caller finishes (vs_run_finish) once
                                       its files are written, then frees; NULL: finished here */
} vs_attribute_opts;

/* The defaults above; the paths, the method and the run NULL. */
void vs_attribute_opts_init(vs_attribute_opts *o);

/* Explain every row of o (see the top of this file) into *attr ([N, ...]: the shape of X, [N, 2, ...]
 * for both sides, [N, F, F] for interactions, [N, <layer>] for layer methods) and *out; with a sharded
 * run its rows are journalled and both are NULL.  Errors name the file or option: VS_ERR_ARG for
 * options that do not fit each other (a usage error), other codes for files that cannot be read or do
 * not fit and for rows that cannot be explained. */
vs_status vs_attribute_run(const vs_attribute_opts *o, vs_tensor **attr, vs_report **out, vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
