/* bench/svae/svae_bench.h - what the SVAE experiment's files share: one trained setting of Table 1
 * and the statistics of the explanation figures (Figs. 3-7). */
#ifndef VERSUS_EXPLAIN_EXPERIMENT_SVAE_H
#define VERSUS_EXPLAIN_EXPERIMENT_SVAE_H

#include "versus/experiment.h"
#include "versus/svae_explain.h"

#define SVAE_MAX_RUNS 10
#define SVAE_MAX_SIGMAS 16
#define SVAE_MAX_METHODS 8

/* One row of Table 1: a model kind and its (alpha, beta), the metrics of each run, run 0's model. */
typedef struct svae_setting {
    char name[48];               /* "SVAE a=60 b=0.9", "SVAE a=60 b=0.9 30ep" (the equal-time grid), "M2 a=60" */
    bool svae;
    double alpha, beta;          /* beta NaN for M2 */
    double weight;               /* the classifier's weight per example (alpha or alpha / batch) */
    int64_t epochs;
    int n_runs;
    double acc[SVAE_MAX_RUNS], R[SVAE_MAX_RUNS], kl[SVAE_MAX_RUNS], seconds[SVAE_MAX_RUNS];
    vs_module *m;                /* run 0's model, owned */
    vs_svae_layout layout;
    double kept[SVAE_MAX_SIGMAS], l2[SVAE_MAX_SIGMAS]; /* invariance test per sigma */
} svae_setting;

/* Statistics of the explanations (the figures are PNG files in image_dir). */
typedef struct svae_figures {
    int64_t row, label;          /* the explained test image and its class */
    double grid_kept;            /* share of the Fig. 3 grid classified as label */
    int grid_dims[2];            /* the two crossed nuisance dimensions */
    double d_inv[2], d_cf[2];    /* mean d(x, x~) for k = 1, 2: invariant samples, counterfactuals */
    int64_t n_div;               /* test rows behind d_inv, d_cf */
    double cf_svae, cf_m2;       /* counterfactual success: decoded into the target class */
    int n_methods;
    char methods[SVAE_MAX_METHODS][40];
    double delta[SVAE_MAX_METHODS][3]; /* max |completeness gap|: classifier, Eq. 9 k = 1, k = 2 (NaN: none) */
    int n_files;
    char files[6][48];
} svae_figures;

/* Figs. 3-7 and their statistics with the SVAE s (and M2 m2 for its counterfactuals). */
vs_status vs_svae_figures_run(const vs_dataset *train, const vs_dataset *test, svae_setting *s, svae_setting *m2,
                              const vs_svae_experiment_opts *o, svae_figures *f, vs_error *err);

#endif
