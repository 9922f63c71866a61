/* bench/snx/snx_results.h - what one run of the SNX experiment computed, a small struct per part of
 * its report: the setting (data, model, pairs, options as run), the model and its pair-accuracy
 * baselines, Table II (every method's local masks and scores), Table III (the global masks), Table V
 * (the dual variants) and the timings.  bench/snx/experiment.c fills it; bench/snx/report.c reads it
 * and nothing else of the experiment.  The masks belong to the results (the experiment frees them).
 * Private. */
#ifndef VERSUS_BENCH_SNX_RESULTS_H
#define VERSUS_BENCH_SNX_RESULTS_H

#include "versus/experiment.h"
#include "versus/report.h"
#include "versus/snx.h"
#include "versus/train.h"

#include <stdbool.h>

#define SNX_MAX_LEVELS 20
#define SNX_TOP_K 10      /* Table II: minor features selected (tabular) */
#define SNX_TOP_FRAC 0.75 /* ... fraction of edges selected (graphs) */
#define SNX_GAMMA_ROWS 250 /* training rows the gamma criterion is measured on */
#define SNX_N_WD 2
#define SNX_N_GAMMA 3
#define SNX_N_SENS 3

extern const float vs_snx_wd_grid[SNX_N_WD];
extern const float vs_snx_gamma_grid[SNX_N_GAMMA];
extern const vs_snx_method vs_snx_sens_methods[SNX_N_SENS];

/* Table III rows: the global masks (random: U(0, 1) values, the chance level). */
enum { G_PICK_ALL, G_DES, G_SNX, G_RANDOM, N_GLOBAL };
extern const vs_snx_method vs_snx_global_method[N_GLOBAL];

/* The two protocols of the tabular masks.  SEL_PRESENT (the main one): every mask restricted to the
 * minor features the rows have, in both stages and for every method (vs_snx_opts.present_only), and
 * the top-k taken among those (vs_snx_eval_opts.present_only).  SEL_PAPER: the paper's masks over
 * every minor feature and its top-k over all of them; there a mask value on an absent feature
 * changes no prediction, yet, left near its start of 0.5, it outranks the present features the
 * optimiser shrinks.  Graph masks only exist on edges that are there: one protocol (index 0). */
enum { SEL_PRESENT, SEL_PAPER, N_SEL };

/* The dual variants compared side by side (Table V): the paper's unit-length lambda with eta2 1e-3,
 * the plain projection onto lambda >= 0 and the ball |lambda| <= 10 (the default), both eta2 0.5. */
#define SNX_N_DUAL 3
#define SNX_DUAL_DEFAULT 2
#define SNX_N_DUAL_METHODS 4 /* snx, snx-inter, snx-union, snx-des (graphs: snx alone) */
extern const char *const vs_snx_dual_names[SNX_N_DUAL];
extern const vs_snx_method vs_snx_dual_methods[SNX_N_DUAL_METHODS];

typedef struct snx_summary {
    double mean, std;
} snx_summary;

/* One method's local masks of the pairs (per protocol) and their scores. */
typedef struct snx_method_run {
    vs_snx_method method;
    vs_snx_expl *e[N_SEL];
    vs_snx_eval *ev[N_SEL];    /* [n pairs] per protocol */
    double seconds;            /* vs_snx_local alone (shared stage-1 masks, DES and PGExplainer apart) */
    snx_summary fa[N_SEL], cf[N_SEL], conf[N_SEL];
    snx_summary viol, prec, rec; /* of the raw masks / ranked by m (x) x_s, main protocol */
    double p_fa[N_SEL], p_cf[N_SEL]; /* paired t-test of SNX against this method; NAN for SNX or without SNX */
    double p_prec;             /* the same on the per-pair precision (planted truth) */
    bool sens;                 /* sens_fa / sens_cf filled (per selection) */
    double sens_fa[N_SEL][SNX_MAX_LEVELS], sens_cf[N_SEL][SNX_MAX_LEVELS];
} snx_method_run;

/* The setting of the run: what the report states before its tables. */
typedef struct snx_setting {
    const vs_snx_experiment_opts *opt; /* command, tag, reproducible */
    const char *spec, *model_dir;
    const vs_dataset *d;
    bool graph, truth;         /* graphs (else tabular); planted truth to score precision against */
    int n_sel;                 /* N_SEL on tabular data, 1 on graphs */
    int64_t seed, epochs, split_seed;
    double train_frac;
    vs_pairing pairing;        /* the training pairs of a model trained here */
    vs_snx_opts o;             /* Section IV-H options as run (gamma as chosen) */
    bool gamma_chosen, gamma_given;
    double gamma_crit[SNX_N_GAMMA], gamma_seconds;
    int64_t n_requested;       /* pairs asked for */
    int64_t n_test_pairs;      /* test pairs of the split */
    vs_pairs pairs;            /* the first N test pairs (arrays borrowed from the split) */
    int64_t n_rows, n_queries; /* distinct rows of the pairs; the queries among them */
    int64_t top_k;             /* tabular selection size: min(10, q / 2) */
    int n_levels;
    double levels[SNX_MAX_LEVELS]; /* Fig. 7's selection levels */
} snx_setting;

/* The Siamese model and the pair accuracy the features allow. */
typedef struct snx_model_results {
    double pair_acc, train_seconds;
    float weight_decay;
    bool wd_chosen;            /* weight decay chosen by validation (not given) */
    double wd_val_acc[SNX_N_WD];
    double nn_pair_acc;        /* nearest-neighbour baseline's test pair accuracy */
    double clf_row_acc, clf_pair_acc; /* tabular classifier baseline: test row and induced pair accuracy (NAN on graphs) */
} snx_model_results;

/* Table II: every method's local masks of the pairs. */
typedef struct snx_table2 {
    snx_method_run run[VS_SNX_METHOD_COUNT];
    int n_runs, snx_run;       /* index of SNX in run, or -1 */
} snx_table2;

/* Table III: the global masks (over the rows of the pairs) and their scores on the queries. */
typedef struct snx_table3 {
    vs_snx_expl *glob[N_SEL][N_GLOBAL]; /* glob[.][G_DES] NULL on graphs */
    snx_summary fa[N_GLOBAL][N_SEL], cf[N_GLOBAL][N_SEL], prec[N_GLOBAL], rec[N_GLOBAL];
    double sens_fa[N_GLOBAL][N_SEL][SNX_MAX_LEVELS], sens_cf[N_GLOBAL][N_SEL][SNX_MAX_LEVELS];
} snx_table3;

/* Table V: per dual variant and constrained method, the scores of the main protocol. */
typedef struct snx_dual_row {
    bool done;
    snx_summary fa, cf, conf, viol, prec; /* prec: against planted truth (NAN without) */
    double changed_uc;         /* mean 1 - Jaccard of its top selection with SNX-UC's */
    double differs_snx;        /* mean 1 - Jaccard of its top selection with SNX's (same variant) */
} snx_dual_row;
typedef struct snx_table5 {
    snx_dual_row dual[SNX_N_DUAL][SNX_N_DUAL_METHODS];
} snx_table5;

typedef struct snx_timing {
    bool des_fitted, pg_trained;
    double des_seconds, pg_seconds, global_seconds, wall;
} snx_timing;

typedef struct snx_results {
    snx_setting set;
    snx_model_results model;
    snx_table2 table2;
    snx_table3 table3;
    snx_table5 table5;
    snx_timing time;
} snx_results;

/* The run of method m in Table II, or NULL. */
static inline const snx_method_run *vs_snx_find_run(const snx_table2 *t, vs_snx_method m)
{
    for (int i = 0; i < t->n_runs; i++)
        if (t->run[i].method == m) return &t->run[i];
    return NULL;
}
/* Figure f draws graph g (its undirected edges, src < dst) once per mask: series k is the mean of
 * both directions of masks[k] (an edge mask over g's directed edges) called names[k]; NULL masks are
 * left out.  The planted motif (edge_truth) is highlighted.  VS_ERR_NOMEM when out of memory. */
vs_status vs_snx_graph_figure(vs_report_figure *f, const vs_graph *g, int n_masks, const float *const *masks,
                              const char *const *names);
/* The report of a finished run (data, tables, figures) into *out; VS_OK, or err set. */
vs_status vs_snx_bench_report(const snx_results *res, vs_report **out, vs_error *err);

#endif
