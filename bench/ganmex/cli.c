/* bench_ganmex.c - `versus bench ganmex`: the flags of the GANMEX experiment, the data sets they
 * name, and its report written to OUT (table.md, results.json, index.html, SVG figures, Fig. 2 PNG
 * grids) and printed.  The experiment itself is library code (bench/ganmex/). */
#include "bench/bench.h"
#include "versus/ganmex.h"
#include "versus/versus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const vs_cli_opt ganmex_opts[] = {
    VS_DATA_CLI_OPTS,
    {"data", 1, "training images: mnist-train, fashion-mnist-train, colored-mnist, ... (default mnist-train)"},
    {"test-data", 1, "test images (default: mnist for mnist-train, fashion-mnist for fashion-mnist-train, else 30% of --data)"},
    {"models", 1, "directory of the models, trained there when missing (default OUT/models)"},
    {"out", 1, "report directory (default versus-results/ganmex-<data>)"},
    {"clf-epochs", 1, "classifier epochs when trained (default 5)"},
    {"gan-epochs", 1, "GAN epochs when trained (default 2)"},
    {"gan-batch", 1, "GAN batch size (default 16)"},
    {"g-lr", 1, "generator Adam rate (default 1e-4)"},
    {"d-lr", 1, "critic Adam rate (default 4e-4)"},
    {"gan-opts", 1, "extra task options of the GANMEX model, name=value,... (default: the task's)"},
    {"explain", 1, "test images explained (default 40)"},
    {"faith", 1, "of them, scored by faithfulness and monotonicity (default 5)"},
    {"cascade", 1, "of them, in the cascading randomisation (default 4)"},
    {"cascade-steps", 1, "steps GANMEX is re-trained against each randomised classifier (default 100; 0: not)"},
    {"ig-steps", 1, "IG and expected-gradient points (default 32)"},
    {"per-step", 1, "features flipped per perturbation-curve point (default 8)"},
    {"no-ablations", 0, "skip the ablation GAN: stand-alone (D_cls trained jointly), or on colored data without L_sim"},
    {NULL, 0, NULL},
};

/* The experiment's options from the flags; rc. */
static int experiment_options(const vs_args *a, vs_ganmex_experiment_opts *o)
{
    int rc;
    int64_t v;
    double lr;
    o->spec = vs_args_get(a, "data") ? vs_args_get(a, "data") : "mnist-train";
    o->gan_opts = vs_args_get(a, "gan-opts");
    o->ablations = !vs_args_has(a, "no-ablations");
    o->colored = strstr(o->spec, "colored") != NULL;
    if ((rc = vs_args_int(a, "seed", 1, 0, INT64_MAX, &o->seed)) || (rc = vs_args_int(a, "clf-epochs", 5, 1, 10000, &o->clf_epochs)) ||
        (rc = vs_args_int(a, "gan-epochs", 2, 1, 10000, &o->gan_epochs)) || (rc = vs_args_int(a, "gan-batch", 16, 1, 4096, &o->gan_batch)) ||
        (rc = vs_args_int(a, "explain", 40, 1, 1000000, &o->n_explain)) || (rc = vs_args_int(a, "faith", 5, 0, 1000000, &o->n_faith)) ||
        (rc = vs_args_int(a, "cascade", 4, 0, 1000000, &o->n_cascade)) || (rc = vs_args_int(a, "per-step", 8, 1, 1000000, &o->per_step)) ||
        (rc = vs_args_int(a, "cascade-steps", 100, 0, 1000000, &o->cascade_steps)))
        return rc;
    if ((rc = vs_args_int(a, "ig-steps", 32, 1, 100000, &v))) return rc;
    o->ig_steps = (int)v;
    if ((rc = vs_args_float(a, "g-lr", 1e-4, 1e-12, 10, &lr))) return rc;
    o->g_lr = lr;
    if ((rc = vs_args_float(a, "d-lr", 4e-4, 1e-12, 10, &lr))) return rc;
    o->d_lr = lr;
    return 0;
}

/* The test SPEC that goes with a training SPEC, or NULL: split. */
static const char *default_test(const char *spec)
{
    if (strcmp(spec, "mnist-train") == 0) return "mnist";
    if (strcmp(spec, "fashion-mnist-train") == 0) return "fashion-mnist";
    return NULL;
}

/* The experiment's options with the directory of its models. */
typedef struct ganmex_bench {
    vs_ganmex_experiment_opts o;
    char models[4000];
} ganmex_bench;

static int ganmex_flags(const vs_args *a, void *options, vs_bench_plan *plan)
{
    ganmex_bench *g = options;
    vs_ganmex_experiment_opts_init(&g->o);
    int rc = experiment_options(a, &g->o);
    if (rc) return rc;
    const char *mdir = vs_args_get(a, "models");
    if (mdir && strlen(mdir) >= VS_BENCH_PATH_MAX - 1) return vs_usage_error("bench", "--models: path longer than %d characters", VS_BENCH_PATH_MAX - 2);
    if (mdir) snprintf(g->models, sizeof g->models, "%s", mdir);
    snprintf(plan->out, sizeof plan->out, "versus-results/ganmex-%s", g->o.spec);
    plan->data[0] = g->o.spec;
    plan->data[1] = vs_args_get(a, "test-data") ? vs_args_get(a, "test-data") : default_test(g->o.spec);
    return 0;
}

static vs_status ganmex_run(void *options, const vs_bench_call *c, vs_report **report, vs_error *err)
{
    ganmex_bench *g = options;
    if (!g->models[0]) snprintf(g->models, sizeof g->models, "%s/models", c->out); /* OUT is at most VS_BENCH_PATH_MAX */
    vs_status st = vs_report_make_dirs(c->out, err);
    if (st == VS_OK) st = vs_report_make_dirs(g->models, err);
    if (st != VS_OK) return st;
    g->o.models = g->models, g->o.figures_dir = c->out, g->o.command = c->command, g->o.progress = c->progress;
    return vs_ganmex_experiment(c->data[0], c->data[1], &g->o, report, err);
}

static const vs_bench_budget ganmex_budgets[] = {
    {"quick", "--clf-epochs 1 --gan-epochs 1 --gan-batch 8 --explain 3 --faith 1 --cascade 2 --cascade-steps 2 --ig-steps 4 --per-step 32",
     "the test suite's: minutes on synthetic-shapes (--n 60)"},
    {"paper",
     "--clf-epochs 50 --gan-epochs 160 --gan-batch 16 --g-lr 2e-5 --d-lr 1e-4 --ig-steps 200 --explain 1000 --faith 1000 --cascade 20",
     "GANMEX's MNIST settings: the classifier 50 epochs, the GAN 100k steps (160 epochs of mnist-train's 10k\n"
     "           images at batch 16, Adam 2e-5 / 1e-4), IG and EG with 200 points, 1000 test images; the generator\n"
     "           stays 16 wide with 2 residual blocks (StarGAN's 64 x 6 is the paper's)"},
    {NULL, NULL, NULL},
};

const vs_bench vs_benchmark_ganmex = {
    "ganmex",
    "GANMEX: class-targeted baselines from a StarGAN judged by the explained classifier (Tables 1-2, Figs. 2-3)",
    "versus bench ganmex [--data SPEC] [--test-data SPEC] [--models DIR] [--out DIR] [--gan-epochs E] ...",
    "  flags: --data --test-data --models --out --seed --clf-epochs (5) --gan-epochs (2) --gan-batch (16)\n"
    "  --g-lr (1e-4) --d-lr (4e-4) --gan-opts name=value,... --explain N (40) --faith N (5) --cascade N (4)\n"
    "  --cascade-steps N (100) --ig-steps (32) --per-step (8) --no-ablations, and the data flags (--seed, --path).\n"
    "Reproduces the GANMEX paper's evaluation on one image data set (mnist-train with the mnist test set,\n"
    "fashion-mnist-train with fashion-mnist, colored-mnist split 70/30): trains, or loads from --models\n"
    "(default OUT/models), the classifier S (ganmex-mnist, --clf-epochs), the GANMEX StarGAN judged by S\n"
    "(--arch ganmex, --gan-epochs, --g-lr, --d-lr, --gan-opts) and an ablation of appendix D (a\n"
    "stand-alone GAN with D_cls trained jointly; on coloured data a GAN without the similarity term);\n"
    "explains the first --explain test images one-vs-one (predicted class against S's runner-up) with IG,\n"
    "DeepLIFT, Occlusion-1 and DeepSHAP under the zero, MDTS and GANMEX baselines and with class-targeted\n"
    "expected gradients, and writes Table 1 (baseline distances), Table 2 (AOPC_L, AOPC_all, Gini,\n"
    "faithfulness, monotonicity, inverse localisation), perturbation curves, cascading randomisation\n"
    "(Fig. 3G: baselines fixed before it, and GANMEX re-trained --cascade-steps steps against each\n"
    "randomised classifier, appendix D), fig2_pairs.png and fig2_misclassified.png (Fig. 2) and results.json (target_class_rate,\n"
    "distance, aopc, color_kept, train_seconds, command, commit) to OUT (default\n"
    "versus-results/ganmex-<data>).  On coloured data color_kept counts, over every test row, how often G(x, ct)\n"
    "keeps x's colour with and without L_sim, and compares the two by McNemar's exact test (mcnemar_p).\n"
    "The experiment is the library call vs_ganmex_experiment (versus/ganmex.h).",
    ganmex_opts,
    NULL,
    "table.md, results.json, index.html, figures and fig2_*.png",
    sizeof(ganmex_bench),
    ganmex_flags,
    ganmex_run,
    NULL,
    .budgets = ganmex_budgets,
};
