/* versus/experiment.h - the papers' experiments as library functions that return a vs_report
 * (versus/report.h): tables with typed cells, figures as data, and the raw numbers.
 *
 * An experiment borrows its inputs (data set, options) and returns a new report the caller frees
 * with vs_report_free; writing it (vs_report_write_dir, vs_report_markdown) is the caller's choice.
 * Errors: VS_ERR_ARG for options that do not fit (an unknown method, a method of the other data
 * kind), other codes for data and runs that fail; err names what failed.  Deterministic for a seed. */
#ifndef VERSUS_EXPERIMENT_H
#define VERSUS_EXPERIMENT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "versus/dataset.h"
#include "versus/error.h"
#include "versus/method.h"
#include "versus/report.h"
#include "versus/shard.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The SNX paper's evaluation (Section IV) on one data set: Tables II-V (IV: mask examples with
 * feature names, tabular; V: the dual variants), Figs. 3-7, paired t-tests, random masks as the
 * chance level, a nearest-neighbour baseline of the pair accuracy.
 * Integer options at 0 and doubles below 0 take the defaults named. */
typedef struct vs_snx_experiment_opts {
    const char *spec;          /* data set name shown in the report (required) */
    const char *model_dir;     /* a trained Siamese model directory (with metrics.json), or NULL: train one */
    int64_t seed;              /* model initialisation, training and explanations (vs_snx_experiment_opts_init: 1) */
    int64_t epochs;            /* training epochs without model_dir (3 tabular, 100 graphs) */
    int64_t pairs;             /* the first N test pairs of the SNX protocol (1000 tabular, 240 graphs) */
    double weight_decay;       /* < 0: tabular 0 or 0.05 by validation pair accuracy, graphs 0 */
    const char *pairing;       /* training pairs "snx" or "random", NULL: snx */
    double gamma;              /* < 0: tabular chosen by the stage-1 criterion, graphs Section IV-H */
    const char *methods;       /* comma-separated SNX methods of the registry (snx_kl, or the older snx-kl), NULL: every method of the data kind */
    int iters, pre_iters, global_iters, baseline_iters, pg_epochs; /* 0: Section IV-H (pre_iters: < 0) */
    const char *command;       /* the command line stamped into the report, or NULL */
    FILE *progress;            /* one line per stage, or NULL */
    bool reproducible;         /* leave wall times and the thread count out of the report: runs of one
                                  command (sharded, resumed or not) then write the same bytes */
    const vs_run_opts *run;    /* journal the explanation loop, one item per pair (every method's masks),
                                  for --resume and shards (versus/shard.h); NULL: in memory */
    vs_run **journal;          /* with run: receives the open run, which the caller finishes
                                  (vs_run_finish) once the report is written, then frees; NULL: the
                                  experiment finishes it before building the report */
} vs_snx_experiment_opts;

void vs_snx_experiment_opts_init(vs_snx_experiment_opts *o);
/* Run the experiment on d (tabular rows or graphs, borrowed) and return its report in *out (NULL
 * when o->run is a shard: its pairs are journalled, and vs_run_merge joins the shards): results
 * data in the format "versus-bench-snx/2", figures conformity, gda, violated, sensitivity_local,
 * sensitivity_global (and _paper on tabular data), example (graphs: one query drawn with its masks). */
vs_status vs_snx_experiment(const vs_dataset *d, const vs_snx_experiment_opts *o, vs_report **out, vs_error *err);
/* The demo (versus demo): a Siamese MLP on synthetic credit applicants and a Siamese GCN on synthetic
 * graphs with a planted motif, one query explained against a same-class and an other-class reference
 * with SNX-global and SNX (and saliency maps), every explanation scored (faithfulness, counterfactual,
 * conformity, violated constraints, precision and recall against the planted truth), and a classifier
 * explained one-vs-one with integrated gradients, DeepLIFT and Kernel SHAP.  Data format
 * "versus-demo/1"; figures tabular_masks, tabular_gda, tabular_violated, graph_masks (node-link),
 * graph_gda, graph_violated.  progress (may be NULL) receives the training lines. */
vs_status vs_demo_experiment(uint64_t seed, FILE *progress, vs_report **out, vs_error *err);

/* The search paper's evaluation (Hamilton et al. 2022): Table 1 for every method (faithfulness,
 * inefficiency, mIoU of the projected object) on pairs that share an object, on a GAP CNN classifier
 * and a Siamese GAP CNN trained here; axiom checks; the convergence study (Figs. 5, 10); the picture
 * of one pair (Fig. 4) as png_dir/correspondence.png.  Data format "versus-bench-search/1" with
 * evals_ratio_15, faithfulness_*, inefficiency_*, miou (per method), sam_vs_exact_max_err,
 * sam2_vs_exact_max_err, command, commit. */
typedef struct vs_search_experiment_opts {
    const char *data;            /* name shown ("planted", "mnist", ...) */
    const vs_dataset *images;    /* gray images with labels (borrowed), or NULL: planted objects generated here */
    int64_t pairs;               /* query/retrieved pairs explained (8) */
    int64_t train_rows;          /* the first rows train the backbones (3000); pairs come from the rest */
    int64_t epochs;              /* training epochs (6) */
    int64_t budget1, budget2;    /* coalitions of the sampled first- and second-order methods (1000, 4000) */
    int64_t study_games;         /* random games per kind in the convergence study (50; 0: none) */
    int64_t feature_map;         /* side of the backbones' feature maps on 28x28 images: 3 (default) or 7 (no last pool) */
    uint64_t seed;               /* (1) */
    const char *command;         /* stamped into the results (with the build's commit, vs_build_commit), or NULL */
    const char *png_dir;         /* where correspondence.png goes, or NULL */
    FILE *progress;              /* or NULL */
} vs_search_experiment_opts;
void vs_search_experiment_opts_init(vs_search_experiment_opts *o);
vs_status vs_search_experiment(const vs_search_experiment_opts *o, vs_report **out, vs_error *err);

/* ---- the supervised VAE paper (bench/svae/) ---------------------------------------------------------- */

/* Table 1, Figs. 2-7 on one data set: SVAE over (alpha, beta) in {alpha1, alpha2} x {beta1, beta2} and
 * M2 over {alpha1, alpha2}, all for `epochs` (and the SVAE grid again for time_epochs), trained on
 * `train` and evaluated on `test`; the invariance test; the explanations of one test image by the
 * SVAE with (alpha2, beta2) at equal epochs.  Zero / negative fields take the
 * defaults of vs_svae_experiment_opts_init. */
typedef struct vs_svae_experiment_opts {
    const char *spec;            /* data set name shown in the report (required) */
    int64_t seed;                /* run r uses seed + r (default 1) */
    int64_t runs;                /* trainings per setting (default 1) */
    int64_t train_rows;          /* train on the first N rows (default 10000, mnist-train's size; 0: all) */
    int64_t epochs;              /* default 8 */
    int64_t time_epochs;         /* > 0: the SVAE grid is trained a second time for this many epochs, the
                                    equal-time budget (M2's Eq. 8 decodes every class, so an M2 epoch costs
                                    about C + 1 SVAE epochs); 0: equal epochs only */
    int64_t batch;               /* default 64 */
    double lr;                   /* Adam (default 1e-3) */
    int64_t hidden, z1, z2;      /* default 256, 10, 5 */
    double alpha[2], beta[2];    /* default (60, 6000) and (0.01, 0.9): the paper's MNIST values */
    bool alpha_per_example;      /* false (default): alpha weights the batch MEAN of the classifier's
                                    cross-entropy against the batch SUM of the ELBO terms (PyTorch's default
                                    reductions), so an example's weight is alpha / batch; true: alpha is the
                                    weight per example (the tasks' own option) */
    double unlabelled;           /* M2's unlabelled weight (default 1: Eq. 8 as written; < 0: default) */
    int64_t n_invariance;        /* test rows of the invariance test (default 1000) */
    const char *sigmas;          /* comma-separated (default 0.1,0.25,0.5,1,1.5,2,3,4,5) */
    const char *methods;         /* comma-separated registry names (default expected_gradients,
                                    integrated_gradients,saliency,input_x_gradient) */
    int64_t explain_class;       /* the explained image: the first correctly classified test image of this class (default 3) */
    int64_t n_divergence;        /* test rows of the divergence and counterfactual statistics (default 200) */
    const char *image_dir;       /* the PNG figures (Figs. 3-7) are written here, or NULL */
    const char *command;         /* stamped into the report (with vs_build_commit), or NULL */
    FILE *progress;              /* one line per stage, or NULL */
} vs_svae_experiment_opts;
void vs_svae_experiment_opts_init(vs_svae_experiment_opts *o);
/* Run it; *out receives the report (data format "versus-bench-svae/1": models with accuracy and
 * reconstruction per (alpha, beta), labels_kept and diversity per model and sigma, divergences,
 * counterfactual success, command, commit; figures labels_kept, diversity). */
vs_status vs_svae_experiment(const vs_dataset *train, const vs_dataset *test, const vs_svae_experiment_opts *o, vs_report **out,
                             vs_error *err);

/* The report of interaction matrices attr [N, F, F] of explained inputs of dim features per side
 * (F = dim, or 2 dim for side VS_SIDE_BOTH): a table per row of gap[i] (sum G - (S(x) - S(x'))),
 * diag[i] (share of |G| on the diagonal) and cross[i] (share between query and reference features,
 * both sides only), and the matrices of the first 4 rows (at most 40 features each: those with the
 * largest interactions) as heatmaps.  apath names the attributions in the text.  *out is the
 * caller's (vs_report_free). */
vs_status vs_interactions_report(const char *apath, const vs_tensor *attr, int64_t dim, vs_side side, const double *gap, const double *diag,
                                 const double *cross, vs_report **out, vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
