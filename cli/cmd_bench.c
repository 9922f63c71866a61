/* cmd_bench.c - `versus bench NAME`: reproduce a paper's tables and figures on one data set, or time the
 * kernels, training steps and explainers.  The benchmarks are the registry of bench/registry.c
 * (descriptors of bench/bench.h, one folder each under bench/), all run by vs_bench_main
 * (bench/common.c); each brings its own flags and manual, which `versus help bench [NAME]` and
 * `versus bench NAME --help` print. */
#include "bench/bench.h"
#include "versus/data_spec.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int unknown_bench(const char *name)
{
    char names[512] = "";
    for (int i = 0; i < vs_bench_count(); i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", vs_bench_at(i)->name);
    return vs_usage_error("bench", "unknown benchmark '%s' (%s)", name, names);
}

static int run_bench(int argc, char **argv)
{
    if (argc < 1 || argv[0][0] == '-') return vs_usage_error("bench", "expected a benchmark: 'versus bench snx --data SPEC ...'");
    const vs_bench *b = vs_bench_find(argv[0]);
    return b ? vs_bench_main(b, argc, argv) : unknown_bench(argv[0]);
}

static void print_flags(const vs_bench *b)
{
    if (b->opts && b->opts[0].name) printf("\nflags of versus bench %s:\n", b->name);
    for (const vs_cli_opt *o = b->opts; o && o->name; o++) {
        char left[64];
        snprintf(left, sizeof left, "--%s%s", o->name, o->has_arg ? " X" : "");
        printf("  %-24s %s\n", left, o->help);
    }
    if (!b->budgets) return;
    printf("  %-24s %s\n\nbudgets of versus bench %s (--budget NAME):\n", "--budget X", vs_bench_budget_flag.help, b->name);
    for (const vs_bench_budget *g = b->budgets; g->name; g++) printf("  %-8s %s\n           %s\n", g->name, g->about, g->flags);
}

/* `versus help bench`: the table, every usage, then every benchmark's manual and flags. */
static void bench_help(void)
{
    int n = vs_bench_count();
    printf("\nBenchmarks:\n");
    for (int i = 0; i < n; i++) printf("  %-8s %s\n", vs_bench_at(i)->name, vs_bench_at(i)->summary);
    printf("\n");
    for (int i = 0; i < n; i++) printf("%s %s\n", i ? "      " : "usage:", vs_bench_at(i)->usage);
    bool shards = false, data = false;
    for (int i = 0; i < n; i++) {
        const vs_bench *b = vs_bench_at(i);
        shards |= b->items != NULL, data |= vs_cli_opts_have(b->opts, "path");
        printf("\n%s:\n%s\n", b->name, b->help);
        print_flags(b);
    }
    if (shards) vs_help_shards();
    if (data) printf("\nSPEC (a data set) is one of:\n%s", vs_data_spec_help());
}

/* `versus help bench NAME` and `versus bench NAME --help`: its usage, manual and flags. */
int vs_bench_topic_help(const char *name)
{
    const vs_bench *b = vs_bench_find(name);
    if (!b) return unknown_bench(name);
    printf("usage: %s\n\n%s\n", b->usage, b->help);
    print_flags(b);
    if (b->items) vs_help_shards();
    if (vs_cli_opts_have(b->opts, "path")) printf("\nSPEC (a data set) is one of:\n%s", vs_data_spec_help());
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
    "that journals its items (snx) with the journal's path; the same command with --resume continues.\n"
    "Every report records its command line and the commit versus was built from (versus --version): it\n"
    "comes from the build, never from a flag.  Each benchmark takes its own flags, listed below with its\n"
    "manual; 'versus bench NAME --help' (or 'versus help bench NAME') prints one benchmark's.  Every paper\n"
    "bench has budgets, named sets of its flags: --budget quick (the test suite's, minutes) and --budget\n"
    "paper (the paper's settings, hours); flags you give win over the budget's; results.json records it.",
    NULL,
    run_bench,
    bench_help,
};
