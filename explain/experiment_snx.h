/* explain/experiment_snx.h - the state of one run of the SNX experiment, shared by the part that
 * computes it (experiment_snx.c) and the part that turns it into a report (experiment_snx_report.c).
 * Private. */
#ifndef VERSUS_EXPLAIN_EXPERIMENT_SNX_H
#define VERSUS_EXPLAIN_EXPERIMENT_SNX_H

#include "versus/experiment.h"
#include "versus/nn.h"
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

/* Table III rows: the global masks. */
enum { G_PICK_ALL, G_DES, G_SNX, N_GLOBAL };
extern const vs_snx_method vs_snx_global_method[N_GLOBAL];

/* How the top-k of a tabular mask is taken.  SEL_ALL: over every minor feature, as the paper.
 * SEL_PRESENT: among the minor features the item has (vs_snx_eval_opts.present_only): a mask value
 * on an absent feature changes no prediction (its gradient is 0), so only its rank against the
 * present ones matters, and with SEL_ALL a mask that shrinks every present feature uniformly (the
 * cosine barely notices) loses its whole top-k to untouched absent ones.  Graph masks only exist on
 * edges that are there: SEL_ALL alone. */
enum { SEL_ALL, SEL_PRESENT, N_SEL };

typedef struct snx_summary {
    double mean, std;
} snx_summary;

/* One method's local masks of the pairs and their scores. */
typedef struct snx_method_run {
    vs_snx_method method;
    vs_snx_expl *e;
    vs_snx_eval *ev[N_SEL];    /* [n pairs] per selection */
    double seconds;            /* vs_snx_local alone (shared stage-1 masks, DES and PGExplainer apart) */
    snx_summary fa[N_SEL], cf[N_SEL], conf[N_SEL];
    snx_summary viol, prec, rec; /* of the raw masks / ranked by m (x) x_s: the same for both selections */
    double p_fa[N_SEL], p_cf[N_SEL]; /* Welch t-test of SNX against this method; NAN for SNX or without SNX */
    double p_prec;             /* the same on the per-pair precision (planted truth) */
    bool sens;                 /* sens_fa / sens_cf filled (per selection) */
    double sens_fa[N_SEL][SNX_MAX_LEVELS], sens_cf[N_SEL][SNX_MAX_LEVELS];
} snx_method_run;

typedef struct snx_bench {
    const vs_snx_experiment_opts *opt;
    vs_error *err;
    const char *spec, *model_dir;
    int64_t seed, epochs, split_seed;
    double train_frac;
    bool graph, truth;
    const vs_dataset *d;
    vs_module *m;
    vs_siamese_module sm;
    vs_siamese f;
    vs_train_split sp;
    double pair_acc, train_seconds;
    float weight_decay;
    bool wd_chosen;            /* weight decay chosen by validation (not given) */
    double wd_val_acc[SNX_N_WD];
    bool gamma_chosen, gamma_given;
    double gamma_crit[SNX_N_GAMMA], gamma_seconds;
    int64_t n_requested;
    vs_pairs pairs;            /* the first N test pairs; arrays borrowed from sp.test_pairs */
    int64_t *rows, n_rows, n_queries; /* distinct rows of the pairs, queries first */
    vs_snx_opts o;
    vs_snx_des *des;
    vs_snx_pg *pg;
    double des_seconds, pg_seconds, global_seconds;
    int n_sel;                 /* N_SEL on tabular data, 1 on graphs */
    vs_snx_expl *glob[N_GLOBAL]; /* over rows; glob[G_DES] NULL on graphs */
    vs_snx_eval *gev[N_GLOBAL][N_SEL]; /* [n_queries] */
    snx_summary gfa[N_GLOBAL][N_SEL], gcf[N_GLOBAL][N_SEL], gprec[N_GLOBAL], grec[N_GLOBAL];
    double gsens_fa[N_GLOBAL][N_SEL][SNX_MAX_LEVELS], gsens_cf[N_GLOBAL][N_SEL][SNX_MAX_LEVELS];
    int n_levels;
    double levels[SNX_MAX_LEVELS];
    snx_method_run run[VS_SNX_METHOD_COUNT];
    int n_runs, snx_run;       /* index of SNX in run, or -1 */
    double t0, wall;
} snx_bench;

/* The global masks method m is constrained by (and its conformity is measured against). */
const vs_snx_expl *vs_snx_bench_method_global(const snx_bench *b, vs_snx_method m);
/* The run of method m, or NULL. */
const snx_method_run *vs_snx_bench_find_run(const snx_bench *b, vs_snx_method m);
/* Mean over the blocks of a per-block trace array [n_blocks * n_iters] into out[n_iters]. */
void vs_snx_trace_mean(const vs_snx_trace *t, const float *a, float *out);
/* Every method's local masks of the pairs (experiment_snx_items.c): b->run[i].e and .seconds, item by
 * item through the journal of b->opt->run when given.  *partial: the run is a shard, whose items are
 * now journalled; nothing more to do.  rc 0, or 1 with b->err set. */
int vs_snx_bench_local_masks(snx_bench *b, bool *partial);
/* The report of a finished run (data, tables, figures); rc 0, or 1 with b->err set. */
int vs_snx_bench_report(const snx_bench *b, vs_report **out);

#endif
