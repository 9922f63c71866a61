/* cmd_bench.c - `versus bench NAME`: reproduce a paper's tables and figures on one data set, or time the
 * kernels, training steps and explainers.  The benchmarks are a table of descriptors (cli/bench.h):
 * each lives in cli/bench_NAME.c (flags and printing; the experiment itself is library code) and is
 * listed here with one line.  The flags below are those of the benchmarks that do not parse their
 * own (snx, search). */
#include "cli/bench.h"

#include <stdio.h>
#include <string.h>

/* Every benchmark, one line each, in the order `versus help bench` lists them. */
#define BENCHES(X) \
    X(snx)         \
    X(svae)        \
    X(search)      \
    X(cem)         \
    X(ganmex)      \
    X(perf)

#define DECLARE(name) extern const vs_bench vs_benchmark_##name;
#define ENTRY(name) &vs_benchmark_##name,
BENCHES(DECLARE)
static const vs_bench *const benches[] = {BENCHES(ENTRY) NULL};

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
    {"out", 1, "report directory (default versus-results/snx-<data>)"},
    {"tag", 1, "text stamped into the report, e.g. the commit measured"},
    {"train-rows", 1, "search: rows that train the backbones (default 3000)"},
    {"budget1", 1, "search: coalitions of the sampled first-order methods (default 1000)"},
    {"budget2", 1, "search: coalitions of the sampled second-order methods (default 4000)"},
    {"study-games", 1, "search: random games per kind in the convergence study (default 50; 0: none)"},
    {"feature-map", 1, "search: cells per side of the backbones' feature maps, 3 (default) or 7 (no last pool; KSAM's second order then takes at least 9606 coalitions)"},
    {"commit", 1, "search: the commit measured, stamped into results.json"},
    {"reproducible", 0, "leave wall times and the thread count out: runs of one command write the same bytes"},
    VS_RUN_CLI_OPTS,
    {NULL, 0, NULL},
};

static const vs_bench *find_bench(const char *name)
{
    for (int i = 0; benches[i]; i++)
        if (strcmp(benches[i]->name, name) == 0) return benches[i];
    return NULL;
}

static int unknown_bench(const char *name)
{
    char names[512] = "";
    for (int i = 0; benches[i]; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", benches[i]->name);
    return vs_usage_error("bench", "unknown benchmark '%s' (%s)", name, names);
}

static int run_bench(int argc, char **argv)
{
    const vs_bench *b = argc >= 1 ? find_bench(argv[0]) : NULL;
    if (b && b->own_flags) return b->run(NULL, argc, argv);
    vs_args a;
    int rc = vs_args_parse("bench", bench_opts, argc, argv, &a);
    if (rc) return rc;
    if (a.n_pos < 1) return vs_usage_error("bench", "expected a benchmark: 'versus bench snx --data SPEC ...'");
    if (a.n_pos > 1) return vs_usage_error("bench", "unexpected argument '%s'", a.pos[1]);
    if (!(b = find_bench(a.pos[0]))) return unknown_bench(a.pos[0]);
    if (b->own_flags) return vs_usage_error("bench", "'versus bench %s' takes its flags after the name", b->name);
    return b->run(&a, argc, argv);
}

/* `versus help bench`: the table, every usage, then every benchmark's manual. */
static void bench_help(void)
{
    printf("\nBenchmarks:\n");
    for (int i = 0; benches[i]; i++) printf("  %-8s %s\n", benches[i]->name, benches[i]->summary);
    printf("\n");
    for (int i = 0; benches[i]; i++) printf("%s %s\n", i ? "      " : "usage:", benches[i]->usage);
    for (int i = 0; benches[i]; i++) printf("\n%s:\n%s\n", benches[i]->name, benches[i]->help);
}

int vs_bench_topic_help(const char *name)
{
    const vs_bench *b = find_bench(name);
    if (!b) return unknown_bench(name);
    printf("usage: %s\n\n%s\n", b->usage, b->help);
    return 0;
}

const vs_verb vs_verb_bench = {
    "bench",
    "reproduce a paper's tables and figures (snx, svae, search, ...); time kernels (perf)",
    "usage: versus bench NAME [flags]\n\n"
    "Runs the benchmark NAME: a paper's evaluation on one data set, written as a report directory (table.md,\n"
    "results.json, index.html, figures; `versus report DIR` rebuilds the page), or the engine's timings.\n"
    "Reports go to versus-results/NAME-<data> unless --out says otherwise: a run in a source checkout never\n"
    "replaces the committed bench/results/ unless --out names them.  Ctrl-C (SIGINT) or SIGTERM ends a run\n"
    "that journals its items (snx) with the journal's path; the same command with --resume continues.",
    bench_opts,
    run_bench,
    bench_help,
};
