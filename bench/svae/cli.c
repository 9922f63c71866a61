/* bench_svae.c - `versus bench svae`: the flags of the SVAE experiment, the two data sets they name,
 * and its report (table.md, results.json, index.html, SVG and PNG figures) written to OUT and printed.
 * The experiment itself is library code (bench/svae/). */
#include "bench/bench.h"
#include "versus/versus.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const vs_cli_opt svae_opts[] = {
    VS_DATA_CLI_OPTS,
    {"data", 1, "training SPEC (default mnist-train; fashion-mnist-train for Fashion-MNIST)"},
    {"test-data", 1, "test SPEC (default: --data without its -train suffix)"},
    {"train-rows", 1, "train on the first N rows of --data (default 10000, mnist-train's size; 0: all)"},
    {"runs", 1, "trainings per setting, reported as mean (std) (default 1)"},
    {"epochs", 1, "training epochs of every model (default 8)"},
    {"time-epochs", 1, "also train the SVAE grid for N epochs, the equal-time budget (default 0: off; an M2 epoch costs about C + 1 SVAE epochs)"},
    {"batch-size", 1, "examples per step (default 64)"},
    {"lr", 1, "Adam learning rate (default 0.001)"},
    {"hidden", 1, "hidden units of every encoder and decoder (default 256)"},
    {"z1", 1, "SVAE classifier latent dims (default 10)"},
    {"z2", 1, "SVAE nuisance latent dims = M2's z (default 5)"},
    {"alphas", 1, "A1,A2: classifier weights (default 60,6000, the paper's MNIST values)"},
    {"betas", 1, "B1,B2: SVAE betas (default 0.01,0.9)"},
    {"alpha-per", 1, "batch (default: alpha weights the batch-mean cross-entropy against the batch-summed ELBO, alpha / batch per example) or example"},
    {"unlabelled", 1, "M2's weight of Eq. 8's unlabelled terms (default 1; 0: labelled ELBO only)"},
    {"invariance", 1, "test images of the invariance test (default 1000)"},
    {"sigmas", 1, "sigmas of the invariance test (default 0.1,0.25,0.5,1,1.5,2,3,4,5)"},
    {"methods", 1, "attribution methods of Figs. 4-7 (default expected_gradients,integrated_gradients,saliency,input_x_gradient)"},
    {"class", 1, "class of the explained test image (default 3)"},
    {"divergence", 1, "test images behind the divergence and counterfactual statistics (default 200)"},
    {"out", 1, "report directory (default versus-results/svae-<test data>)"},
    {NULL, 0, NULL},
};

/* "a,b" into v[2]; rc. */
static int pair_flag(const vs_args *a, const char *name, double lo, double hi, double *v)
{
    const char *s = vs_args_get(a, name);
    char tail;
    if (!s) return 0;
    if (sscanf(s, "%lf,%lf%c", &v[0], &v[1], &tail) != 2 || !(v[0] >= lo && v[0] <= hi && v[1] >= lo && v[1] <= hi))
        return vs_usage_error("bench", "option '--%s' expects two numbers in [%g, %g] as A,B, got '%s'", name, lo, hi, s);
    return 0;
}

/* The experiment's options and its test SPEC (stored in test_spec[n]) from the flags; rc. */
static int experiment_options(const vs_args *a, vs_svae_experiment_opts *o, char *test_spec, size_t n)
{
    int rc;
    const char *data = vs_args_get(a, "data"), *test = vs_args_get(a, "test-data");
    o->spec = data ? data : "mnist-train";
    size_t len = strlen(o->spec);
    if (test) snprintf(test_spec, n, "%s", test);
    else if (len > 6 && strcmp(o->spec + len - 6, "-train") == 0 && len - 6 < n) snprintf(test_spec, n, "%.*s", (int)(len - 6), o->spec);
    else return vs_usage_error("bench", "--test-data SPEC is required when --data does not end in -train");
    int64_t v;
    if ((rc = vs_args_int(a, "seed", 1, 0, INT64_MAX, &o->seed)) || (rc = vs_args_int(a, "runs", 1, 1, 10, &o->runs)) ||
        (rc = vs_args_int(a, "epochs", 8, 0, 100000, &o->epochs)) || (rc = vs_args_int(a, "train-rows", 10000, 0, INT64_MAX, &o->train_rows)) || (rc = vs_args_int(a, "time-epochs", 0, 0, 100000, &o->time_epochs)) || (rc = vs_args_int(a, "batch-size", 64, 1, 65536, &o->batch)) ||
        (rc = vs_args_float(a, "lr", 1e-3, 1e-9, 10, &o->lr)) || (rc = vs_args_int(a, "hidden", 256, 1, 1 << 16, &o->hidden)) ||
        (rc = vs_args_int(a, "z1", 10, 1, 4096, &o->z1)) || (rc = vs_args_int(a, "z2", 5, 2, 4096, &o->z2)) ||
        (rc = pair_flag(a, "alphas", 0, 1e9, o->alpha)) || (rc = pair_flag(a, "betas", 0, 1, o->beta)) ||
        (rc = vs_args_float(a, "unlabelled", 1, 0, 1e6, &o->unlabelled)) ||
        (rc = vs_args_int(a, "invariance", 1000, 1, INT64_MAX, &o->n_invariance)) ||
        (rc = vs_args_int(a, "class", 3, 0, 4095, &o->explain_class)) ||
        (rc = vs_args_int(a, "divergence", 200, 1, INT64_MAX, &v)))
        return rc;
    o->n_divergence = v;
    const char *per = vs_args_get(a, "alpha-per");
    if (per && strcmp(per, "batch") != 0 && strcmp(per, "example") != 0)
        return vs_usage_error("bench", "option '--alpha-per' expects batch or example, got '%s'", per);
    o->alpha_per_example = per && strcmp(per, "example") == 0;
    o->sigmas = vs_args_get(a, "sigmas"), o->methods = vs_args_get(a, "methods");
    return 0;
}

/* The experiment's options with the test SPEC they name. */
typedef struct svae_bench {
    vs_svae_experiment_opts o;
    char test_spec[256];
} svae_bench;

static int svae_flags(const vs_args *a, void *options, vs_bench_plan *plan)
{
    svae_bench *s = options;
    vs_svae_experiment_opts_init(&s->o);
    int rc = experiment_options(a, &s->o, s->test_spec, sizeof s->test_spec);
    if (rc) return rc;
    vs_bench_default_out("svae", s->test_spec, plan->out, sizeof plan->out);
    plan->data[0] = s->o.spec, plan->data[1] = s->test_spec;
    return 0;
}

static vs_status svae_run(void *options, const vs_bench_call *c, vs_report **report, vs_error *err)
{
    svae_bench *s = options;
    s->o.command = c->command, s->o.progress = c->progress, s->o.image_dir = c->out;
    if (mkdir(c->out, 0777) != 0 && errno != EEXIST) return vs_error_set(err, VS_ERR_IO, "%s: cannot create directory: %s", c->out, strerror(errno));
    return vs_svae_experiment(c->data[0], c->data[1], &s->o, report, err);
}

static const vs_bench_budget svae_budgets[] = {
    {"quick", "--epochs 1 --time-epochs 1 --hidden 16 --invariance 40 --divergence 5 --sigmas 0.5,1,2",
     "the test suite's: minutes on synthetic-shapes (--n 120)"},
    {"paper", "--runs 5", "the paper's 5 trainings per setting, reported as mean (std)"},
    {NULL, NULL, NULL},
};

const vs_bench vs_benchmark_svae = {
    "svae",
    "the supervised VAE's invariances (and M2): Table 1 and Figs. 2-7 at a small scale",
    "versus bench svae [--data mnist-train|fashion-mnist-train] [--epochs E] [--time-epochs N] [--runs R] [--alphas A1,A2]\n"
    "                        [--alpha-per batch|example] [--betas B1,B2] [--hidden H] [--sigmas S,...] [--methods M,...] [--out DIR]",
    "Reproduces \"Learning the invariances of a classifier with a supervised VAE\" at a small scale.  On --data\n"
    "(default mnist-train; the first --train-rows 10000 images; test: --test-data, default the SPEC without\n"
    "-train) it trains the SVAE\n"
    "(Eq. 6, z1 = --z1 classifier dims, z2 = --z2 nuisance dims) for every (alpha, beta) of --alphas x --betas\n"
    "(default 60,6000 x 0.01,0.9, the paper's MNIST values; --alpha-per batch, the default, reads alpha as the\n"
    "weight of the batch-mean cross-entropy against the batch-summed ELBO, alpha / batch per example, and\n"
    "--alpha-per example as the weight per example) and M2 (Eq. 8 with its unlabelled terms, weight\n"
    "--unlabelled; z of --z2 dims) for every alpha, all with one hidden layer of --hidden units (default 256),\n"
    "Adam --lr 0.001, batch 64, --epochs 8, --runs 1 (seed + run).  --time-epochs N trains the SVAE grid again\n"
    "for N epochs, the equal-time budget (an M2 epoch decodes x once per class: about C + 1 SVAE epochs), so\n"
    "equal epochs and equal time are both reported.  Reported: Table 1 (R = E log p(x|z) per\n"
    "test image with the true label, test accuracy, KL); the invariance test of Fig. 2 on --invariance test\n"
    "images (labels kept and L2 distance when z2 ~ N(0, sigma^2) for each of --sigmas, decoded and classified\n"
    "again; labels_kept.svg, diversity.svg); with the SVAE of (A2, B2) and the first correctly classified test\n"
    "image of --class (default 3): fig3_invariant_grid.png (two nuisance dims crossed, step 0.75),\n"
    "fig4_classifier.png (the classifier's attributions by --methods: GradientSHAP = expected_gradients over\n"
    "32 training images, IG with a zero baseline, saliency, input x gradient), fig5_divergence_z2.png and\n"
    "fig6_divergence_z1.png (attributions of d(x, x~) = KL(q(z_k|x) || q(z_k|x~)) at 3 invariant samples,\n"
    "baseline x), fig7_counterfactuals.png (z1 set to each class's mean over training images, z2 kept, with\n"
    "the first method's Eq. 9 attribution), and over --divergence test images the mean divergences of\n"
    "invariant samples and counterfactuals and the counterfactual success of SVAE and M2.\n"
    "Default OUT: versus-results/svae-<test data>.",
    svae_opts,
    NULL,
    "table.md, results.json, index.html, SVG and PNG figures",
    sizeof(svae_bench),
    svae_flags,
    svae_run,
    NULL,
    .budgets = svae_budgets,
};
