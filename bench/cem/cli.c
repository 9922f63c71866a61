/* bench_cem.c - `versus bench cem`: the flags of the CEM-MAF experiment (bench/cem/experiment.c),
 * its report written to OUT (table.md, results.json, index.html, SVG) with the PNG figures, and the
 * tables printed. */
#include "bench/bench.h"
#include "cli/cem_cli.h"
#include "versus/versus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const vs_cli_opt cem_bench_opts[] = {
    {"data", 1, "fashion-mnist-clothes, fashion-mnist-shoes or synthetic (rectangles with known factors)"},
    {"model", 1, "trained classifier directory (default: train cem-fashion on the subset here)"},
    {"vae", 1, "trained VAE directory (default: train the DIP-VAE of Table 4 here)"},
    {"train-rows", 1, "training images of the subset used to train here (default 6000)"},
    {"clf-epochs", 1, "classifier epochs (default 2)"},
    {"vae-epochs", 1, "DIP-VAE epochs (default 10)"},
    {"dip", 1, "DIP-VAE type: i or ii (default i)"},
    {"images", 1, "test images explained (default 100)"},
    {"figure-rows", 1, "rows of figure7.png (default 10)"},
    {"attrs", 1, "attribute functions (versus help explain; default: the 4 most active latents)"},
    {"superpixels", 1, "SLIC superpixels per image (default 0: pixels, as the paper on Fashion-MNIST)"},
    {"lime-samples", 1, "LIME coalitions (default 1000)"},
    {"batch", 1, "images per PN/PP problem (default 25)"},
    {"seed", 1, "seed of training and LIME (default 1)"},
    {"out", 1, "report directory (default versus-results/cem-<data>)"},
    VS_CEM_CLI_OPTS,
    {NULL, 0, NULL},
};

/* The experiment's options from the flags and its default OUT; rc. */
static int cem_flags(const vs_args *a, void *options, vs_bench_plan *plan)
{
    vs_cem_experiment_opts *o = options;
    int rc;
    vs_cem_experiment_opts_init(o);
    o->data = vs_args_get(a, "data");
    if (!o->data) return vs_usage_error("bench", "--data is required (fashion-mnist-clothes or fashion-mnist-shoes)");
    o->model_dir = vs_args_get(a, "model");
    o->vae_dir = vs_args_get(a, "vae");
    o->attrs = vs_args_get(a, "attrs");
    const char *dip = vs_args_get(a, "dip");
    if (dip && strcmp(dip, "i") != 0 && strcmp(dip, "ii") != 0) return vs_usage_error("bench", "--dip expects i or ii, got '%s'", dip);
    o->dip = dip && strcmp(dip, "ii") == 0 ? 2 : 1;
    int64_t v[9];
    if ((rc = vs_args_int(a, "train-rows", o->train_rows, 1, 100000000, &v[0])) || (rc = vs_args_int(a, "clf-epochs", o->clf_epochs, 1, 10000, &v[1])) ||
        (rc = vs_args_int(a, "vae-epochs", o->vae_epochs, 1, 10000, &v[2])) || (rc = vs_args_int(a, "images", o->n_images, 1, 100000, &v[3])) ||
        (rc = vs_args_int(a, "figure-rows", o->n_figure, 0, 1000, &v[4])) || (rc = vs_args_int(a, "superpixels", 0, 0, 100000, &v[5])) ||
        (rc = vs_args_int(a, "lime-samples", o->lime_samples, 2, 10000000, &v[6])) || (rc = vs_args_int(a, "batch", o->batch, 1, 100000, &v[7])) ||
        (rc = vs_args_int(a, "seed", 1, 0, INT64_MAX, &v[8])) || (rc = vs_cli_cem_opts(a, &o->cem)))
        return rc;
    o->train_rows = v[0], o->clf_epochs = v[1], o->vae_epochs = v[2], o->n_images = v[3], o->n_figure = v[4], o->superpixels = (int)v[5];
    o->lime_samples = v[6], o->batch = v[7], o->seed = (uint64_t)v[8];
    snprintf(plan->out, sizeof plan->out, "versus-results/cem-%s", strncmp(o->data, "fashion-mnist-", 14) == 0 ? o->data + 14 : o->data);
    return 0;
}

static vs_status cem_run(void *options, const vs_bench_call *c, vs_report **report, vs_error *err)
{
    vs_cem_experiment_opts *o = options;
    o->out_dir = c->out, o->command = c->command, o->progress = c->progress;
    return vs_cem_experiment(o, report, err);
}

static const vs_bench_budget cem_budgets[] = {
    {"quick", "--train-rows 300 --clf-epochs 1 --vae-epochs 1 --images 3 --figure-rows 2 --lime-samples 50 --batch 3 --searches 2 --pn-iters 20 --pp-iters 10",
     "the test suite's: minutes on --data synthetic"},
    {"paper", "--searches 9 --pn-iters 1000 --pp-iters 100 --train-rows 60000 --clf-epochs 20 --vae-epochs 30",
     "CEM-MAF's search (9 x 1000 PN subgradient steps, 9 x 100 ISTA steps per image); every training image of\n"
     "           the subset, the classifier 20 and the DIP-VAE 30 epochs (the paper does not state its epochs)"},
    {NULL, NULL, NULL},
};

const vs_bench vs_benchmark_cem = {
    "cem",
    "CEM-MAF: pertinent negatives and positives on a DIP-VAE manifold (Table 6, Fashion-MNIST)",
    "versus bench cem --data fashion-mnist-clothes|fashion-mnist-shoes|synthetic [--model DIR] [--vae DIR]\n"
    "                        [--images N] [--train-rows N] [--attrs SPEC] [--superpixels N] [--out DIR] ...",
    "CEM-MAF's Fashion-MNIST evaluation (supplement Section 4) on the clothes (classes 0,1,2,3,4,6) or\n"
    "shoes (5,7,9) subset.  Without --model / --vae it trains the Table 5 classifier (--clf-epochs, default\n"
    "2) and the Table 4 DIP-VAE (--dip i|ii, --vae-epochs, default 10), both with Adam 1e-3 on the first\n"
    "--train-rows (6000) training images of the subset.  It scores the VAE (off-diagonal covariance mass of\n"
    "mu, active latents), writes traversal.png, takes the 4 most active latents as attributes unless\n"
    "--attrs is given, and explains the first --images (100) test images: the PN of Eq. 1 (subgradient\n"
    "descent over z with the c search), the PP of Eq. 2 (ISTA on a pixel or --superpixels mask, then\n"
    "features added by rank), LIME (--lime-samples) and Grad-CAM (features with positive weight).\n"
    "Reported: Table 6 (# PP features, PP accuracy, PP correlation; LIME and Grad-CAM also cut to the\n"
    "PP's count), PN validity, attribute violations and distances, figure7.png (original, CEM-MAF PN/PP,\n"
    "pixel CEM PN/PP, LIME, Grad-CAM).  The hyperparameter flags are those of `versus help explain`;\n"
    "OUT defaults to versus-results/cem-<clothes|shoes>.  The library call is vs_cem_experiment (versus/cem.h).",
    cem_bench_opts,
    NULL,
    "results.json, table.md, index.html, pp_features.svg, traversal.png, figure7.png",
    sizeof(vs_cem_experiment_opts),
    cem_flags,
    cem_run,
    NULL,
    .budgets = cem_budgets,
};
