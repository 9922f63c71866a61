/* bench/snx/snx_bench.h - the state of one run of the SNX experiment, shared by the part that
 * computes it (bench/snx/experiment.c) and the part that turns it into a report (bench/snx/report.c).
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

/* One local explanation of every pair the explanation loop computes: method under options o, with its
 * global masks and PGExplainer, into *out (and its seconds into *seconds when not NULL). */
typedef struct snx_local_job {
    vs_snx_method method;
    const vs_snx_opts *o;
    const vs_snx_expl *global;
    const vs_snx_pg *pg;
    vs_snx_expl **out;
    double *seconds;
} snx_local_job;
#define SNX_MAX_JOBS (VS_SNX_METHOD_COUNT * N_SEL + SNX_N_DUAL * SNX_N_DUAL_METHODS)

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
    vs_snx_opts po;            /* the options of SEL_PAPER (o with present_only off) */
    vs_snx_expl *glob[N_SEL][N_GLOBAL]; /* over rows; glob[.][G_DES] NULL on graphs */
    vs_snx_eval *gev[N_GLOBAL][N_SEL]; /* [n_queries] */
    snx_summary gfa[N_GLOBAL][N_SEL], gcf[N_GLOBAL][N_SEL], gprec[N_GLOBAL], grec[N_GLOBAL];
    double gsens_fa[N_GLOBAL][N_SEL][SNX_MAX_LEVELS], gsens_cf[N_GLOBAL][N_SEL][SNX_MAX_LEVELS];
    int n_levels;
    double levels[SNX_MAX_LEVELS];
    snx_method_run run[VS_SNX_METHOD_COUNT];
    int n_runs, snx_run;       /* index of SNX in run, or -1 */
    int64_t top_k;             /* tabular selection size: min(10, q / 2) */
    double nn_pair_acc;        /* nearest-neighbour baseline's test pair accuracy */
    double clf_row_acc, clf_pair_acc; /* tabular classifier baseline: test row and induced pair accuracy (NAN on graphs) */
    int64_t width;             /* encoder width of a model trained here */
    vs_pairing pairing;        /* its training pairs */
    /* Table V: per dual variant and constrained method, the scores of the main protocol */
    struct snx_dual_row {
        bool done;
        snx_summary fa, cf, conf, viol, prec; /* prec: against planted truth (NAN without) */
        double changed_uc;     /* mean 1 - Jaccard of its top selection with SNX-UC's */
        double differs_snx;    /* mean 1 - Jaccard of its top selection with SNX's (same variant) */
    } dual[SNX_N_DUAL][SNX_N_DUAL_METHODS];
    vs_snx_opts dual_o[SNX_N_DUAL];            /* the options of each dual variant */
    vs_snx_expl *dual_e[SNX_N_DUAL][SNX_N_DUAL_METHODS]; /* their masks (the default variant: the runs') */
    snx_local_job jobs[SNX_MAX_JOBS];          /* the explanation loop's plan */
    int n_jobs;
    double t0, wall;
} snx_bench;

/* The run of method m, or NULL.  Here, not in experiment.c, so that the report (report.c) reads the
 * run's state without calling back into the part that computes it. */
static inline const snx_method_run *vs_snx_bench_find_run(const snx_bench *b, vs_snx_method m)
{
    for (int i = 0; i < b->n_runs; i++)
        if (b->run[i].method == m) return &b->run[i];
    return NULL;
}
/* Figure f draws graph g (its undirected edges, src < dst) once per mask: series k is the mean of
 * both directions of masks[k] (an edge mask over g's directed edges) called names[k]; NULL masks are
 * left out.  The planted motif (edge_truth) is highlighted.  VS_ERR_NOMEM when out of memory. */
vs_status vs_snx_graph_figure(vs_report_figure *f, const vs_graph *g, int n_masks, const float *const *masks,
                              const char *const *names);
/* Every planned local explanation of the pairs (b->jobs, bench/snx/items.c), item by item through
 * the journal of b->opt->run when given.  *partial: the run is a shard, whose items are
 * now journalled; nothing more to do.  rc 0, or 1 with b->err set. */
int vs_snx_bench_local_masks(snx_bench *b, bool *partial);
/* The report of a finished run (data, tables, figures); rc 0, or 1 with b->err set. */
int vs_snx_bench_report(const snx_bench *b, vs_report **out);

#endif
