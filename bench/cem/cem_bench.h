/* bench/cem/cem_bench.h - what the CEM-MAF experiment measures, shared by the run
 * (bench/cem/experiment.c) and its report (bench/cem/report.c). */
#ifndef VERSUS_EXPLAIN_EXPERIMENT_CEM_H
#define VERSUS_EXPLAIN_EXPERIMENT_CEM_H

#include "versus/cem.h"
#include "versus/dataset.h"

#define VS_CEM_DIP_HIDDEN 1200 /* Table 4 */
#define VS_CEM_DIP_LATENT 16
#define VS_CEM_SYNTH_FACTORS 5 /* width, height, x, y, brightness */

/* The PP methods compared; the "matched" rows keep as many features as CEM-MAF's PP (user study). */
enum { VS_CEM_M_CEMMAF, VS_CEM_M_LIME, VS_CEM_M_GRADCAM, VS_CEM_M_LIME_K, VS_CEM_M_GRADCAM_K, VS_CEM_N_METHODS };

typedef struct vs_cem_method_row {
    double features, accuracy, correlation; /* correlation NaN for fewer than 3 features */
} vs_cem_method_row;

typedef struct vs_cem_image {
    int64_t t0, label;
    vs_cem_method_row m[VS_CEM_N_METHODS];
    bool pn_found, recon_flips;
    int64_t pn_cls;
    double latent_dist, input_dist;  /* |z - z0|, |D(z) - x0| */
    int violations, added;           /* attributes decreased / increased beyond attr_tol */
    char text[160];                  /* "+z3 +z7" */
} vs_cem_image;

typedef struct vs_cem_run {
    vs_dataset *train, *test;
    vs_module *clf, *vae;
    double clf_accuracy, vae_elbo, offdiag, train_seconds, explain_seconds[VS_CEM_N_METHODS];
    int64_t latent, n_active;
    float *factors;                  /* synthetic data: [test n, VS_CEM_SYNTH_FACTORS], else NULL */
    double factor_gap;               /* the supervised score (NaN without factors) */
    int64_t factor_latent[VS_CEM_SYNTH_FACTORS];
    float factor_corr[VS_CEM_SYNTH_FACTORS];
    char attr_spec[512];
    vs_cem_attrs attrs;
    int64_t n;
    vs_cem_image *img;
} vs_cem_run;

/* Synthetic images with known factors (bench/cem/synth.c): n rectangles, *factors [n, 5]
 * (width, height, x, y, brightness; caller frees), classes wide / tall / square. */
extern const char *const vs_cem_synth_factor_names[VS_CEM_SYNTH_FACTORS];
vs_status vs_cem_synthetic(int64_t n, uint64_t seed, vs_dataset **out, float **factors, vs_error *err);

/* The report of a finished run (bench/cem/report.c). */
vs_status vs_cem_report_build(const vs_cem_experiment_opts *o, const vs_cem_run *r, double wall, vs_report **out, vs_error *err);

#endif
