/* cmd_bench.c - `versus bench`: reproduce a paper's tables and figures on one data set, or time the
 * kernels, training steps and explainers.  The verb hands its arguments to the benchmark named by
 * the first word: snx (flags parsed here and in cli/bench_snx.c; the experiment is
 * explain/experiment_snx.c) or perf (bench/bench_main.c, which parses
 * its own). */
#include "bench/bench.h"
#include "cli/bench.h"

#include <string.h>

static const vs_cli_opt bench_opts[] = {
    VS_DATA_CLI_OPTS,
    {"data", 1, "data SPEC: adult, bank, credit, compas, mutag, synthetic-tabular, synthetic-graph, csv:FILE, ..."},
    {"model", 1, "trained Siamese model directory (versus train --arch siamese-...); default: train one"},
    {"epochs", 1, "training epochs without --model (default 3 tabular, 100 graphs)"},
    {"weight-decay", 1, "Adam weight decay without --model (default: tabular 0 or 0.05 by validation pair accuracy, graphs 0)"},
    {"pairing", 1, "training pairs without --model: snx (fixed SNX pairs) or random (fresh each epoch); default snx"},
    {"gamma", 1, "gamma of Eqs. 4 and 6 (default: tabular chosen by the stage-1 criterion, graphs Section IV-H)"},
    {"pairs", 1, "test pairs explained, the first N of the SNX protocol (default 1000 tabular, 240 graphs)"},
    {"methods", 1, "comma-separated methods (default: every method of the data kind)"},
    {"iters", 1, "stage-2 MaxIter (default: Section IV-H, 100 tabular, 400 graphs)"},
    {"pre-iters", 1, "stage-2 PreIter (default 50 tabular, 0 graphs)"},
    {"global-iters", 1, "stage-1 MaxIter (default 50 tabular, 200 graphs)"},
    {"baseline-iters", 1, "GNNExplainer iterations and DES iterations (default 100 and 300)"},
    {"pg-epochs", 1, "PGExplainer training epochs (default 30)"},
    {"out", 1, "report directory (default bench/results/snx-<data>)"},
    {"tag", 1, "text stamped into the report, e.g. the commit measured"},
    {"train-rows", 1, "search: rows that train the backbones (default 3000)"},
    {"budget1", 1, "search: coalitions of the sampled first-order methods (default 1000)"},
    {"budget2", 1, "search: coalitions of the sampled second-order methods (default 4000)"},
    {"study-games", 1, "search: random games per kind in the convergence study (default 10; 0: none)"},
    {"commit", 1, "search: the commit measured, stamped into results.json"},
    {"reproducible", 0, "leave wall times and the thread count out: runs of one command write the same bytes"},
    VS_RUN_CLI_OPTS,
    {NULL, 0, NULL},
};

static int run_bench(int argc, char **argv)
{
    if (argc >= 1 && strcmp(argv[0], "perf") == 0) return vs_bench_perf("versus bench perf", argc, argv);
    if (argc >= 1 && strcmp(argv[0], "svae") == 0) return vs_bench_svae(argc, argv);
    vs_args a;
    int rc = vs_args_parse("bench", bench_opts, argc, argv, &a);
    if (rc) return rc;
    if (a.n_pos < 1) return vs_usage_error("bench", "expected a benchmark: 'versus bench snx --data SPEC ...'");
    if (a.n_pos > 1) return vs_usage_error("bench", "unexpected argument '%s'", a.pos[1]);
    if (strcmp(a.pos[0], "snx") == 0) return vs_bench_snx(&a, argc, argv);
    if (strcmp(a.pos[0], "search") == 0) return vs_bench_search(&a, argc, argv);
    return vs_usage_error("bench", "unknown benchmark '%s' (snx, svae, search or perf)", a.pos[0]);
}

const vs_verb vs_verb_bench = {
    "bench",
    "reproduce a paper's tables and figures (snx, svae, search); time kernels (perf)",
    "usage: versus bench snx --data SPEC [--model DIR] [--pairs N] [--seed S] [--epochs E] [--out DIR]\n"
    "                        [--methods M,...] [--gamma G] [--weight-decay W] [--pairing snx|random] [--tag TEXT]\n"
    "                        [--reproducible] [--shard K/N] [--resume]\n"
    "       versus bench svae [--data mnist-train|fashion-mnist-train] [--epochs E] [--runs R] [--alphas A1,A2]\n"
    "                        [--betas B1,B2] [--hidden H] [--sigmas S,...] [--methods M,...] [--commit HASH] [--out DIR]\n"
    "       versus bench search [--data planted|mnist|fashion-mnist] [--pairs N] [--train-rows N] [--epochs E]\n"
    "                        [--budget1 N] [--budget2 N] [--study-games N] [--seed S] [--commit HASH] [--out DIR]\n"
    "       versus bench perf [--threads 1,2] [--filter SUBSTR,...] [--reps N] [--json FILE] [--list] [--rss]\n\n"
    "perf times the engine: peak FMA throughput, SGEMM (square 64-1024 and the linear layers' skinny\n"
    "shapes), single convolutions of the papers' models (forward, and forward + backward), one training\n"
    "step (forward, loss, backward, Adam) of the papers' models, and IG-200,\n"
    "Occlusion-1 and saliency on the GANMEX MNIST classifier.  Each workload warms up, then reports the\n"
    "median of --reps timed samples (default 15) at each --threads count (default 1 and all cores), as\n"
    "JSON lines and a Markdown table; --list names the workloads, --filter picks them by substring,\n"
    "--json also writes the lines to FILE, --rss ends with the peak resident memory.  With --threads 1,N\n"
    "the thread scaling of sgemm_nn_512 and ganmex_mnist_step is also measured pairwise: 1- and N-thread\n"
    "samples (each after an untimed run) alternate, and the median of their time ratios is printed\n"
    "(a \"scaling\" JSON line).\n"
    "The same program is bench/vs_bench; `make bench-compare` runs PyTorch on the same workloads and\n"
    "prints the ratios.\n\n"
    "svae:\n"
    "Reproduces \"Learning the invariances of a classifier with a supervised VAE\" at a small scale.  On --data\n"
    "(default mnist-train; the first --train-rows 10000 images; test: --test-data, default the SPEC without\n"
    "-train) it trains the SVAE\n"
    "(Eq. 6, z1 = --z1 classifier dims, z2 = --z2 nuisance dims) for every (alpha, beta) of --alphas x --betas\n"
    "(default 60,6000 x 0.01,0.9, the paper's MNIST values) and M2 (Eq. 8 with its unlabelled terms, weight\n"
    "--unlabelled; z of --z2 dims) for every alpha, all with one hidden layer of --hidden units (default 256),\n"
    "Adam --lr 0.001, batch 64, --epochs 8 (the SVAE: --svae-epochs, default the same; an M2 epoch costs about\n"
    "C + 1 SVAE epochs), --runs 1 (seed + run).  Reported: Table 1 (R = E log p(x|z) per\n"
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
    "Default OUT: bench/results/svae-<test data>.\n\n"
    "search:\n"
    "Reproduces Hamilton et al. (ICLR 2022), axiomatic explanations of similarity search.  --data planted\n"
    "(default: 28x28 gray images, each with one object of 4 classes and a distractor, masks known),\n"
    "mnist or fashion-mnist (the object mask: pixels above 0.1).  Two GAP CNNs (3 convs to a 3 x 3 feature\n"
    "map, global average pool) are trained on the first --train-rows rows for --epochs: a classifier and a\n"
    "Siamese metric model; similarity = cosine of the pooled features.  --pairs same-class pairs of the\n"
    "remaining rows are explained by SBSM, Partition SHAP, LIME, Kernel SHAP (superpixels), VESM, Grad-CAM,\n"
    "SAM, IG-SAM, KSAM (feature-map cells), first order on the retrieved image and second order on both\n"
    "(--budget1 / --budget2 coalitions for the sampled ones).  Reported: Table 1 per backbone (faithfulness:\n"
    "drop of similarity when the top 30% pixels are blurred; second order: similarity with all but the query\n"
    "object and its projection blurred; inefficiency |sum - (v(N) - v(empty))|; mIoU of the projected\n"
    "object), axiom checks (SAM and second-order SAM against exact Shapley / Shapley-Taylor values of the\n"
    "dot-product head, Grad-CAM vs IG-SAM on A.4's half-blind head), the convergence study of the\n"
    "Shapley-Taylor estimators on 15 players (Figs. 5, 10; evals_ratio_15) and correspondence.png (Fig. 4).\n"
    "Default OUT: bench/results/search-<data>.\n\n"
    "snx:\n"
    "Reproduces the structure of the SNX paper's evaluation (Section IV) on one data set.  The Siamese\n"
    "model is --model DIR (its split and pairs recovered from DIR/metrics.json), or one trained here:\n"
    "siamese-mlp (p -> 64 -> 32) on tabular data, a 3-layer GIN (32 wide, 16-d embedding) on graphs,\n"
    "Adam with lr 0.01 for --epochs, seeded by --seed, on the fixed SNX training pairs (--pairing random:\n"
    "fresh random pairs each epoch); on tabular data the weight decay is 0 or 0.05,\n"
    "whichever gives the better pair accuracy on a validation split of the training portion.  A\n"
    "nearest-neighbour baseline (majority class of the nearest training rows, pair same-class when the\n"
    "classes agree) shows the pair accuracy the features allow.  On tabular data gamma is chosen from\n"
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
    "OUT defaults to bench/results/snx-<data>.  SNX explains tabular rows and graphs, not images.\n"
    "The experiment is the library call vs_snx_experiment (versus/experiment.h).\n"
    "Long runs: each test pair is an item (every method's masks of it); finished pairs are journalled\n"
    "(OUT.journal) and --resume continues a killed run.  --shard K/N explains pairs\n"
    "[floor((K-1) P / N), floor(K P / N)) after the shared stages (training, gamma, stage 1, DES,\n"
    "PGExplainer: every shard repeats them, deterministically) and writes them to the part file --out;\n"
    "`versus merge PART... --out OUT` then scores every pair and writes the report.  With --reproducible\n"
    "(times and threads left out) the merged files equal a single run's byte for byte (docs/CLUSTER.md).",
    bench_opts,
    run_bench,
    NULL,
};
