/* bench/snx/snx_bench.h - the working state of one run of the SNX experiment: what it holds while it
 * computes (the model, the split, DES, PGExplainer, the plan of the explanation loop) around the
 * results it fills (bench/snx/snx_results.h, all the report reads).  Shared by experiment.c and the
 * explanation loop items.c.  Private. */
#ifndef VERSUS_EXPLAIN_EXPERIMENT_SNX_H
#define VERSUS_EXPLAIN_EXPERIMENT_SNX_H

#include "bench/snx/snx_results.h"
#include "versus/nn.h"

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
    snx_results res;           /* what the run computes, for the report */
    vs_error *err;
    vs_module *m;
    vs_siamese_module sm;
    vs_siamese f;
    vs_train_split sp;
    int64_t *rows;             /* [res.set.n_rows] distinct rows of the pairs, queries first */
    vs_snx_des *des;
    vs_snx_pg *pg;
    vs_snx_opts po;            /* the options of SEL_PAPER (o with present_only off) */
    vs_snx_eval *gev[N_GLOBAL][N_SEL]; /* [n_queries] scores of the global masks */
    vs_snx_opts dual_o[SNX_N_DUAL];            /* the options of each dual variant */
    vs_snx_expl *dual_e[SNX_N_DUAL][SNX_N_DUAL_METHODS]; /* their masks (the default variant: the runs') */
    snx_local_job jobs[SNX_MAX_JOBS];          /* the explanation loop's plan */
    int n_jobs;
    double t0;
} snx_bench;

/* Every planned local explanation of the pairs (b->jobs, bench/snx/items.c), item by item through
 * the journal of b->res.set.opt->run when given.  *partial: the run is a shard, whose items are
 * now journalled; nothing more to do.  rc 0, or 1 with b->err set. */
int vs_snx_bench_local_masks(snx_bench *b, bool *partial);

#endif
