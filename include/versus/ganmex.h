/* versus/ganmex.h - the GANMEX paper's evaluation as a library call (explain/experiment_ganmex*.c):
 * class-targeted baselines from a StarGAN trained against the explained classifier (task "ganmex",
 * versus/task.h; the baselines are vs_generator_baselines of versus/explain.h) compared with the zero
 * baseline, the minimum-distance training sample (MDTS) and a random target-class sample.
 *
 * The experiment trains (or loads, when their directories hold a model.json) the classifier S
 * (zoo "ganmex-mnist"), the GANMEX model (zoo "ganmex" with S attached) and, for the ablations of
 * appendix D, a stand-alone GAN whose D_cls is trained jointly (cls=critic) or, on coloured data, a
 * GANMEX model without the similarity term (lambda_sim=0).  It then explains the first n_explain
 * test images one-vs-one, "why the predicted class c0 and not ct" (ct: S's runner-up class), with
 * S_c0 - S_ct as the score, and reports:
 *   Table 1   mean L2 distance of x to its GANMEX, MDTS, random target-class and zero baselines, and
 *             the sampled intra- and inter-class distances (appendix B)
 *   Table 2   AOPC_L, AOPC_all, Gini, faithfulness, monotonicity and inverse localisation of IG,
 *             DeepLIFT, Occlusion-1 and DeepSHAP with each baseline, and class-targeted expected
 *             gradients (appendix C), with mean perturbation curves per method (Fig. 3A)
 *   Fig. 3G   cascading randomisation of S's layers (output, FC, CNN2, CNN1): rank correlation of
 *             the IG maps with the zero, GANMEX and stand-alone-GAN baselines
 *   Fig. 2    PNG grids of inputs, baselines and saliency maps (written to figures_dir), including
 *             the misclassification analysis (why the predicted class and not the true one)
 * and in results data "versus-bench-ganmex/1": target_class_rate, distance, aopc, color_kept
 * (coloured data), train_seconds, classifier_accuracy, command, commit.
 *
 * Ownership: the data sets are borrowed; the report is the caller's (vs_report_free). */
#ifndef VERSUS_GANMEX_H
#define VERSUS_GANMEX_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "versus/dataset.h"
#include "versus/error.h"
#include "versus/report.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vs_ganmex_experiment_opts {
    const char *spec;          /* data set name shown in the report (required) */
    const char *models;        /* directory of the models: classifier/, ganmex/, standalone/, nosim/ (required) */
    const char *figures_dir;   /* where the PNG grids go, or NULL: none */
    int64_t seed;              /* default 1 */
    int64_t clf_epochs;        /* classifier epochs when trained here (default 5) */
    int64_t gan_epochs;        /* GAN epochs when trained here (default 2) */
    int64_t gan_batch;         /* default 16 */
    double g_lr, d_lr;         /* Adam rates of generator and critic, beta1 0.5 (default 1e-4, 4e-4) */
    const char *gan_opts;      /* extra task options of the GANMEX model ("lambda_sim=100"), or NULL */
    int64_t n_explain;         /* test images explained (default 40) */
    int64_t n_faith;           /* of them, scored by faithfulness and monotonicity (default 5) */
    int64_t n_cascade;         /* of them, in the cascading randomisation (default 4) */
    int ig_steps;              /* IG and expected-gradients points (default 32) */
    int64_t per_step;          /* features flipped per perturbation-curve point (default 8) */
    int64_t aopc_features;     /* L of AOPC_L in features (default 100) */
    bool ablations;            /* the stand-alone GAN (on coloured data instead: the GAN without L_sim) */
    bool colored;              /* coloured MNIST: report color_kept */
    const char *command, *commit; /* stamped into the report, or NULL */
    FILE *progress;            /* one line per stage, or NULL */
} vs_ganmex_experiment_opts;

void vs_ganmex_experiment_opts_init(vs_ganmex_experiment_opts *o);
/* Run the experiment: train rows d, test rows test (NULL: the 30% of d that vs_train's stratified
 * split with o->seed holds out).  *out receives the report. */
vs_status vs_ganmex_experiment(const vs_dataset *d, const vs_dataset *test, const vs_ganmex_experiment_opts *o, vs_report **out,
                               vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
