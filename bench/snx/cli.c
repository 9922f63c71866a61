/* bench_snx.c - `versus bench snx`: the flags of the SNX experiment, the data set they name, and
 * its report written to OUT (table.md, results.json, index.html, SVG figures) and printed.  The
 * experiment itself is library code (bench/snx/). */
#include "bench/bench.h"
#include "versus/versus.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const vs_cli_opt snx_opts[] = {
    VS_DATA_CLI_OPTS,
    {"data", 1, "data SPEC: adult, bank, credit, compas, mutag, synthetic-tabular, synthetic-graph, csv:FILE, ..."},
    {"model", 1, "trained Siamese model directory (versus train --arch siamese-...); default: train one"},
    {"epochs", 1, "training epochs without --model (default 3 tabular, 100 graphs)"},
    {"weight-decay", 1, "Adam weight decay without --model (default: tabular 0 or 0.05 by validation pair accuracy, graphs 0)"},
    {"pairing", 1, "training pairs without --model: fixed (the SNX protocol's pairs; alias snx) or random (fresh each epoch); default fixed"},
    {"gamma", 1, "gamma of Eqs. 4 and 6 (default: tabular chosen by the stage-1 criterion, graphs Section IV-H)"},
    {"pairs", 1, "test pairs explained, the first N of the SNX protocol (default 1000 tabular, 240 graphs)"},
    {"methods", 1, "comma-separated methods (default: every method of the data kind)"},
    {"iters", 1, "stage-2 MaxIter (default: Section IV-H, 100 tabular, 400 graphs)"},
    {"pre-iters", 1, "stage-2 PreIter (default 50 tabular, 0 graphs)"},
    {"global-iters", 1, "stage-1 MaxIter (default 50 tabular, 200 graphs)"},
    {"baseline-iters", 1, "GNNExplainer iterations and DES iterations (default 100 and 300)"},
    {"pg-epochs", 1, "PGExplainer training epochs (default 30)"},
    {"out", 1, "report directory (default versus-results/snx-<data>)"},
    {"reproducible", 0, "leave wall times and the thread count out: runs of one command write the same bytes"},
    VS_RUN_CLI_OPTS,
    {NULL, 0, NULL},
};

/* An integer flag into an int option (0 when absent); rc. */
static int int_flag(const vs_args *a, const char *name, int64_t lo, int *out)
{
    int64_t v;
    int rc = vs_args_int(a, name, 0, lo, 100000, &v);
    if (rc == 0 && vs_args_has(a, name)) *out = (int)v;
    return rc;
}

/* The experiment's options from the flags, its data set, seed and default OUT; rc. */
static int snx_flags(const vs_args *a, void *options, vs_bench_plan *plan)
{
    vs_snx_experiment_opts *o = options;
    int64_t v;
    int rc;
    vs_snx_experiment_opts_init(o);
    o->spec = vs_args_get(a, "data");
    o->model_dir = vs_args_get(a, "model");
    o->methods = vs_args_get(a, "methods");
    o->pairing = vs_args_get(a, "pairing");
    o->reproducible = vs_args_has(a, "reproducible");
    if (!o->spec) return vs_usage_error("bench", "--data SPEC is required (adult, bank, credit, compas, mutag, synthetic-tabular, ...)");
    if (o->model_dir && vs_args_has(a, "epochs")) return vs_usage_error("bench", "--epochs trains a model; it does not go with --model");
    if ((rc = vs_args_int(a, "seed", 1, 0, INT64_MAX, &o->seed))) return rc;
    if ((rc = vs_args_int(a, "epochs", 0, 1, 100000, &o->epochs))) return rc;
    if ((rc = vs_args_int(a, "pairs", 0, 2, INT64_MAX, &o->pairs))) return rc;
    if ((rc = vs_args_float(a, "weight-decay", -1, 0, 100, &o->weight_decay))) return rc;
    if ((rc = vs_args_float(a, "gamma", -1, 0, 1e6, &o->gamma))) return rc;
    if ((rc = int_flag(a, "iters", 1, &o->iters)) || (rc = int_flag(a, "global-iters", 1, &o->global_iters)) ||
        (rc = int_flag(a, "baseline-iters", 1, &o->baseline_iters)) || (rc = int_flag(a, "pg-epochs", 1, &o->pg_epochs)))
        return rc;
    if ((rc = vs_args_int(a, "pre-iters", 0, 0, 100000, &v))) return rc;
    if (vs_args_has(a, "pre-iters")) o->pre_iters = (int)v;
    if (o->methods && strlen(o->methods) >= 1024) return vs_usage_error("bench", "--methods: list too long");
    vs_bench_default_out("snx", o->spec, plan->out, sizeof plan->out);
    plan->data[0] = o->spec, plan->seed = (uint64_t)o->seed;
    return 0;
}

static vs_status snx_run(void *options, const vs_bench_call *c, vs_report **report, vs_error *err)
{
    vs_snx_experiment_opts *o = options;
    o->command = c->command, o->progress = c->progress, o->run = c->run, o->journal = c->journal;
    return vs_snx_experiment(c->data[0], o, report, err);
}

static const vs_bench_budget snx_budgets[] = {
    {"quick", "--pairs 12", "the test suite's: 12 test pairs (with --n 400 on synthetic data, minutes)"},
    {"paper", "--pairs 1000000000", "every test pair of the SNX protocol (Adult: 39,072); shard it (--shard K/N, versus merge)"},
    {NULL, NULL, NULL},
};

const vs_bench vs_benchmark_snx = {
    "snx",
    "SNX, Siamese networks explained: Tables II-V and Figs. 3-7 on tabular data or graphs",
    "versus bench snx --data SPEC [--model DIR] [--pairs N] [--seed S] [--epochs E] [--out DIR]\n"
    "                        [--methods M,...] [--gamma G] [--weight-decay W] [--pairing snx|random]\n"
    "                        [--reproducible] [--shard K/N] [--resume]",
    "Reproduces the structure of the SNX paper's evaluation (Section IV) on one data set.  The Siamese\n"
    "model is --model DIR (its split and pairs recovered from DIR/metrics.json), or one trained here:\n"
    "siamese-mlp (p -> 64 -> 32) on tabular data, a 3-layer GIN (32 wide, 16-d embedding) on graphs,\n"
    "Adam with lr 0.01 for --epochs, seeded by --seed, on the fixed SNX training pairs (--pairing random:\n"
    "fresh random pairs each epoch); on tabular data the weight decay is 0 or 0.05,\n"
    "whichever gives the better pair accuracy on a validation split of the training portion.  A\n"
    "nearest-neighbour baseline (majority class of the nearest training rows, pair same-class when the\n"
    "classes agree) and, on tabular data, a classifier baseline (versus's mlp classifier, 20 epochs, on\n"
    "the same training portion, pair same-class when the predicted classes agree) show the pair accuracy\n"
    "the features allow: a Siamese model near the stronger one is as good as the data lets it be.\n"
    "GNNExplainer fits each graph's edge mask with the other graph held unmasked (no entropy term:\n"
    "see versus/snx.h).  On tabular data gamma is chosen from\n"
    "1e-3 .. 1e-2 on the stage-1 masks of training rows by the area between their CF and FA curves,\n"
    "never by planted truth.  Tabular masks live on the minor features the rows have, in both stages\n"
    "and for every method (Table II-b: the paper's masks over every minor feature); the top k is the\n"
    "paper's 10, at most half the major features.  The dual of Eq. 12 is bounded and projected\n"
    "(|lambda| <= 10, eta2 0.5) so that the global mask's bounds act; Table V compares it with the\n"
    "paper's unit-length dual (eta2 1e-3) and the plain projection.\n"
    "The first N test pairs of the SNX protocol (each test row with 2 same-class and 2 other-class\n"
    "references) are explained by every method: tabular pick-all, random, des, snx-global, sm, snx-uc,\n"
    "snx-kl, snx-des, snx-inter, snx-union, snx; graphs pick-all, random, snx-global, sm, snx-uc,\n"
    "snx-kl, snx, gnnexplainer, pgexplainer (random: U(0,1) masks, the chance level); all with the\n"
    "other hyperparameters of Section IV-H unless overridden.  Reported:\n"
    "  Table II   faithfulness (Eq. 1) and counterfactual (Eq. 2) of the local masks with the top k\n"
    "             minor features (tabular) or 75% of the edges (graphs) selected, mean (std) over the\n"
    "             pairs, the best method marked, paired t-tests of SNX against every other method,\n"
    "             conformity (Fig. 3/4), violated constraints, precision/recall against planted truth\n"
    "             (with a paired t-test of SNX's precision against every method); Table II-b\n"
    "             (tabular): the paper's protocol (masks and top k over every minor feature)\n"
    "  Table III  the global masks (pick-all, des, snx-global, random) of the queries\n"
    "  Table IV   (tabular) mask examples of the first query with feature names\n"
    "  Table V    the dual variants: do the global mask's constraints change the local masks?\n"
    "  figures    conformity.svg (Fig. 3), gda.svg (Fig. 5), violated.svg (Fig. 6),\n"
    "             sensitivity_local.svg and sensitivity_global.svg (Fig. 7; tabular also _paper);\n"
    "             on graphs example.svg, the first query drawn with its masks and the motif highlighted\n"
    "Writes OUT/table.md (also printed), OUT/results.json (every number, per pair, and the report),\n"
    "OUT/index.html (one self-contained page; `versus report OUT` rebuilds it) and the figures;\n"
    "OUT defaults to versus-results/snx-<data>.  SNX explains tabular rows and graphs, not images.\n"
    "The experiment is the library call vs_snx_experiment (versus/experiment.h).",
    snx_opts,
    "pairs",
    "table.md, results.json, index.html and figures",
    sizeof(vs_snx_experiment_opts),
    snx_flags,
    snx_run,
    NULL,
    .budgets = snx_budgets,
};
