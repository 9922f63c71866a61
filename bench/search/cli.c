/* bench_search.c - `versus bench search`: the flags of the search experiment (Hamilton et al. 2022),
 * the images they name, and its report written to OUT (table.md, results.json, index.html, SVG
 * figures, correspondence.png) and printed.  The experiment is library code
 * (bench/search/). */
#include "bench/bench.h"
#include "versus/versus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const vs_cli_opt search_opts[] = {
    VS_DATA_CLI_OPTS,
    {"data", 1, "planted (default), mnist or fashion-mnist"},
    {"pairs", 1, "same-class pairs explained (default 8)"},
    {"epochs", 1, "training epochs of the two backbones (default 6)"},
    {"train-rows", 1, "rows that train the backbones (default 3000)"},
    {"budget1", 1, "coalitions of the sampled first-order methods (default 1000)"},
    {"budget2", 1, "coalitions of the sampled second-order methods (default 4000)"},
    {"study-games", 1, "random games per kind in the convergence study (default 50; 0: none)"},
    {"feature-map", 1, "cells per side of the backbones' feature maps, 3 (default) or 7 (no last pool; KSAM's second order then takes at least 9606 coalitions)"},
    {"out", 1, "report directory (default versus-results/search-<data>)"},
    {NULL, 0, NULL},
};

/* The experiment's options from the flags, its images (none for planted) and default OUT; rc. */
static int search_flags(const vs_args *a, void *options, vs_bench_plan *plan)
{
    vs_search_experiment_opts *o = options;
    vs_search_experiment_opts_init(o);
    int64_t v;
    int rc;
    const char *spec = vs_args_get(a, "data");
    o->data = spec ? spec : "planted";
    if ((rc = vs_args_int(a, "seed", 1, 0, INT64_MAX, &v))) return rc;
    o->seed = (uint64_t)v;
    if ((rc = vs_args_int(a, "pairs", o->pairs, 1, 100000, &o->pairs)) || (rc = vs_args_int(a, "epochs", o->epochs, 1, 100000, &o->epochs)) ||
        (rc = vs_args_int(a, "train-rows", o->train_rows, 100, INT64_MAX, &o->train_rows)) ||
        (rc = vs_args_int(a, "budget1", o->budget1, 10, 100000000, &o->budget1)) ||
        (rc = vs_args_int(a, "budget2", o->budget2, 100, 100000000, &o->budget2)) ||
        (rc = vs_args_int(a, "study-games", o->study_games, 0, 10000, &o->study_games)) ||
        (rc = vs_args_int(a, "feature-map", o->feature_map, 3, 7, &o->feature_map)))
        return rc;
    if (o->feature_map != 3 && o->feature_map != 7) return vs_usage_error("bench", "--feature-map: 3 or 7, not %lld", (long long)o->feature_map);
    vs_bench_default_out("search", o->data, plan->out, sizeof plan->out);
    if (o->feature_map == 7 && strlen(plan->out) + 5 < sizeof plan->out) strcat(plan->out, "-fm7"); /* beside the 3 x 3 report */
    plan->data[0] = strcmp(o->data, "planted") != 0 ? o->data : NULL;
    return 0;
}

static vs_status search_run(void *options, const vs_bench_call *c, vs_report **report, vs_error *err)
{
    vs_search_experiment_opts *o = options;
    o->command = c->command, o->progress = c->progress, o->png_dir = c->out, o->images = c->data[0];
    return vs_search_experiment(o, report, err);
}

static const vs_bench_budget search_budgets[] = {
    {"quick", "--pairs 2 --train-rows 400 --epochs 1 --budget1 200 --budget2 500 --study-games 1", "the test suite's: minutes on planted data"},
    {"paper", "--pairs 100 --budget1 5000 --budget2 5000 --train-rows 10000 --epochs 20",
     "the paper's 5000 evaluations per sampled method, 100 pairs; backbones on 10000 rows for 20 epochs"},
    {NULL, NULL, NULL},
};

const vs_bench vs_benchmark_search = {
    "search",
    "Hamilton et al. 2022, explaining similarity search: Table 1, Figs. 4, 5, 10, the axiom checks",
    "versus bench search [--data planted|mnist|fashion-mnist] [--pairs N] [--train-rows N] [--epochs E]\n"
    "                        [--budget1 N] [--budget2 N] [--study-games N] [--feature-map 3|7]\n"
    "                        [--seed S] [--out DIR]",
    "Reproduces Hamilton et al. (ICLR 2022), axiomatic explanations of similarity search.  --data planted\n"
    "(default: 28x28 gray images, each with one object of 4 classes and a distractor, masks known),\n"
    "mnist or fashion-mnist (the object mask: pixels above 0.1).  Two GAP CNNs (3 convs to a 3 x 3 feature\n"
    "map, global average pool) are trained on the first --train-rows rows for --epochs: a classifier and a\n"
    "Siamese metric model; similarity = cosine of the pooled features.  --feature-map 7 drops the last\n"
    "average pool: 7 x 7 maps, 49 cells per image for SAM, IG-SAM, KSAM (the sampled methods keep their\n"
    "budgets, but KSAM's second order takes at least n^2 + 2 = 9606 coalitions for its 4753 pair terms of\n"
    "n = 98 players; the axiom checks that enumerate every coalition run on the 3 x 3 maps only and say\n"
    "so; default OUT: versus-results/search-<data>-fm7).  --pairs same-class pairs of the remaining rows\n"
    "are explained by SBSM, Partition SHAP, LIME, Kernel SHAP (superpixels), VESM, Grad-CAM, SAM, IG-SAM,\n"
    "KSAM (feature-map cells), first order on the retrieved image and second order on both\n"
    "(--budget1 / --budget2 coalitions for the sampled ones).  Reported: Table 1 per backbone (faithfulness:\n"
    "drop of similarity when the top 30% pixels are blurred; second order: similarity with all but the query\n"
    "object and its projection blurred; inefficiency |sum - (v(N) - v(empty))|; mIoU of the projected\n"
    "object), axiom checks (SAM and second-order SAM against exact Shapley / Shapley-Taylor values of the\n"
    "dot-product head, Grad-CAM vs IG-SAM on A.4's half-blind head), the convergence study of the\n"
    "Shapley-Taylor estimators on 15 players (Figs. 5, 10; evals_ratio_15: evaluations the per-pair\n"
    "permutation estimator needs over Kernel-Direct's for the same MSE, a row for each of the kernel's 14\n"
    "budgets 250-20000 and their geometric mean, every point covered: the permutation estimators run to\n"
    "2.56M evaluations, and a kernel MSE above the per-pair estimator's first point is read off the line\n"
    "through its first two, marked extrapolated; MSE of the 105 pair indices averaged over --study-games\n"
    "random games of each kind, 50 by default, also on each half of them and as the geometric mean of\n"
    "each game's own ratio; the same under four other readings of the paper's random networks: biases,\n"
    "Glorot-normal weights, Boolean inputs, one hidden layer), correspondence.png (Fig. 4) and a table of\n"
    "the paper's claims, each marked reproduced or not with the reason.\n"
    "Default OUT: versus-results/search-<data> (--feature-map 7: search-<data>-fm7).",
    search_opts,
    NULL,
    "table.md, results.json, index.html, figures and correspondence.png",
    sizeof(vs_search_experiment_opts),
    search_flags,
    search_run,
    NULL,
    .budgets = search_budgets,
};
