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
    {NULL, 0, NULL},
};

static int run_bench(int argc, char **argv)
{
    if (argc >= 1 && strcmp(argv[0], "perf") == 0) return vs_bench_perf("versus bench perf", argc, argv);
    vs_args a;
    int rc = vs_args_parse("bench", bench_opts, argc, argv, &a);
    if (rc) return rc;
    if (a.n_pos < 1) return vs_usage_error("bench", "expected a benchmark: 'versus bench snx --data SPEC ...'");
    if (a.n_pos > 1) return vs_usage_error("bench", "unexpected argument '%s'", a.pos[1]);
    if (strcmp(a.pos[0], "snx") == 0) return vs_bench_snx(&a, argc, argv);
    return vs_usage_error("bench", "unknown benchmark '%s' (snx or perf)", a.pos[0]);
}

const vs_verb vs_verb_bench = {
    "bench",
    "reproduce a paper's tables and figures (SNX: Tables II-III, Figs. 3-7); time kernels (perf)",
    "usage: versus bench snx --data SPEC [--model DIR] [--pairs N] [--seed S] [--epochs E] [--out DIR]\n"
    "                        [--methods M,...] [--gamma G] [--weight-decay W] [--tag TEXT]\n"
    "       versus bench perf [--threads 1,2] [--filter SUBSTR,...] [--reps N] [--json FILE] [--list] [--rss]\n"
    "                         [--clock wall|cpu]\n\n"
    "perf times the engine: peak FMA throughput, SGEMM (square 64-1024 and the linear layers' skinny\n"
    "shapes), single convolutions of the papers' models (forward, and forward + backward), one training\n"
    "step (forward, loss, backward, Adam) of the papers' models, IG-200, Occlusion-1 and saliency on the\n"
    "GANMEX MNIST classifier, and IG-200 of 16 images on a 784-512-256-10 MLP and on conv-pool-conv-pool-\n"
    "linear-linear.  Each workload warms up, then reports the\n"
    "median of --reps timed samples (default 15) at each --threads count (default 1 and all cores), as\n"
    "JSON lines and a Markdown table; --list names the workloads, --filter picks them by substring,\n"
    "--json also writes the lines to FILE, --rss ends with the peak resident memory.  With --threads 1,N\n"
    "the thread scaling of sgemm_nn_512 and ganmex_mnist_step is also measured pairwise: 1- and N-thread\n"
    "samples (each after an untimed run) alternate, and the median of their time ratios is printed\n"
    "(a \"scaling\" JSON line).  --clock cpu times with the process's CPU time instead of the wall clock\n"
    "(for one thread on a machine that other programs share); every line says which clock it used.\n"
    "The same program is bench/vs_bench; `make bench-compare` runs PyTorch on the same workloads (and\n"
    "the whole `versus train` process against a PyTorch script doing the same work) and prints the\n"
    "ratios with the ISA and the measured FMA peak.\n\n"
    "snx:\n"
    "Reproduces the structure of the SNX paper's evaluation (Section IV) on one data set.  The Siamese\n"
    "model is --model DIR (its split and pairs recovered from DIR/metrics.json), or one trained here:\n"
    "siamese-mlp (p -> 64 -> 32) on tabular data, a 3-layer GIN (32 wide, 16-d embedding) on graphs,\n"
    "Adam with lr 0.01 for --epochs, seeded by --seed; on tabular data the weight decay is 0 or 0.05,\n"
    "whichever gives the better pair accuracy on a validation split of the training portion.  On\n"
    "tabular data gamma is chosen from 1e-3 .. 1e-2 on the stage-1 masks of training rows by the area\n"
    "between their CF and FA curves (top k among the present features), never by planted truth.\n"
    "The first N test pairs of the SNX protocol (each test row with 2 same-class and 2 other-class\n"
    "references) are explained by every method: tabular pick-all, des, snx-global, sm, snx-uc, snx-kl,\n"
    "snx-des, snx-inter, snx-union, snx; graphs pick-all, snx-global, sm, snx-uc, snx-kl, snx,\n"
    "gnnexplainer, pgexplainer; all with the other hyperparameters of\n"
    "Section IV-H unless overridden.  Reported:\n"
    "  Table II   faithfulness (Eq. 1) and counterfactual (Eq. 2) of the local masks with the top 10\n"
    "             minor features (tabular) or 75% of the edges (graphs) selected, mean (std) over the\n"
    "             pairs, the best method marked, Welch t-tests of SNX against every other method,\n"
    "             conformity (Fig. 3/4), violated constraints, precision/recall against planted truth\n"
    "             (with a t-test of SNX's precision against every method); Table II-b (tabular): the\n"
    "             same with the top 10 among the features the pair has (vs_snx_eval_opts.present_only)\n"
    "  Table III  the global masks (pick-all, des, snx-global) of the queries\n"
    "  figures    conformity.svg (Fig. 3), gda.svg (Fig. 5), violated.svg (Fig. 6),\n"
    "             sensitivity_local.svg and sensitivity_global.svg (Fig. 7); on graphs example.svg,\n"
    "             the first query drawn with its masks and the planted motif highlighted\n"
    "Writes OUT/table.md (also printed), OUT/results.json (every number, per pair, and the report),\n"
    "OUT/index.html (one self-contained page; `versus report OUT` rebuilds it) and the figures;\n"
    "OUT defaults to bench/results/snx-<data>.  SNX explains tabular rows and graphs, not images.\n"
    "The experiment is the library call vs_snx_experiment (versus/experiment.h).",
    bench_opts,
    run_bench,
    NULL,
};
