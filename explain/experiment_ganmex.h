/* explain/experiment_ganmex.h - the numbers of one run of the GANMEX experiment, shared by the part
 * that computes them (experiment_ganmex.c) and the part that turns them into a report and figures
 * (experiment_ganmex_report.c).  Private. */
#ifndef VERSUS_EXPLAIN_EXPERIMENT_GANMEX_H
#define VERSUS_EXPLAIN_EXPERIMENT_GANMEX_H

#include "versus/ganmex.h"
#include "versus/nn.h"

enum { GX_IG, GX_DEEPLIFT, GX_OCCLUSION, GX_DEEPSHAP, GX_EG, GX_N_METHODS };
enum { GX_ZERO, GX_MDTS, GX_GANMEX, GX_N_BASELINES };
enum { GX_CASCADE_ZERO, GX_CASCADE_GANMEX, GX_CASCADE_STANDALONE, GX_N_CASCADE };
#define GX_N_LAYERS 4 /* cascading randomisation: output, FC, CNN2, CNN1 */
#define GX_GRID_ROWS 4

extern const char *const vs_gx_method_names[GX_N_METHODS];   /* registry names */
extern const char *const vs_gx_method_labels[GX_N_METHODS];  /* "IG", ... */
extern const char *const vs_gx_baseline_labels[GX_N_BASELINES];
extern const char *const vs_gx_layer_labels[GX_N_LAYERS];

/* Table 2: one method with one baseline, means over the explained images. */
typedef struct gx_cell {
    bool done;
    double aopc_l, aopc_all, gini, faith, mono, invloc;
    int64_t n, n_faith;
    double *curve;             /* mean perturbation curve [n_points] (malloc'd) */
    int64_t n_points;
} gx_cell;

typedef struct gx_run {
    const vs_ganmex_experiment_opts *o;
    int64_t n_explain, C, c, h, w;
    double clf_accuracy;       /* S on the test rows */
    double train_seconds[4];   /* classifier, ganmex, standalone, nosim (NaN: not trained in this run) */
    double target_rate, target_rate_standalone, target_rate_nosim;
    double dist[GX_N_BASELINES + 1], d_intra, d_inter; /* zero, mdts, ganmex, random */
    gx_cell cell[GX_N_METHODS][GX_N_BASELINES];
    double cascade[GX_N_CASCADE][GX_N_LAYERS];
    bool has_standalone, has_nosim;
    double color_with_sim, color_without_sim;
    /* Fig. 2: inputs, baselines and maps of GX_GRID_ROWS pairs, and of misclassified images */
    int n_grid, n_mis;
    float *grid_x, *grid_b, *grid_a; /* [rows][dim], [rows][N_BASELINES][dim], [rows][3 methods][N_BASELINES][dim] */
    int64_t grid_from[2 * GX_GRID_ROWS], grid_to[2 * GX_GRID_ROWS];
    float *mis_x, *mis_b, *mis_a;    /* the same for the misclassified images (GANMEX baseline of the true class) */
} gx_run;

/* The report of a finished run (experiment_ganmex_report.c); the PNG grids go to o->figures_dir. */
vs_status vs_gx_report(const gx_run *run, vs_report **out, vs_error *err);

#endif
