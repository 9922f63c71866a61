/* bench/bench.h - the benchmarks behind `versus bench`: each reproduces one paper's evaluation on
 * one data set and writes a report directory (bench/NAME/), or times the engine (bench/perf/).
 * Private to the program. */
#ifndef VERSUS_BENCH_BENCH_H
#define VERSUS_BENCH_BENCH_H

#include "cli/cli.h"
#include "versus/dataset.h"
#include "versus/report.h"

#include <stddef.h>
#include <stdint.h>

#define VS_BENCH_PATH_MAX 3800

/* What a bench's flags ask of the common code before it runs: filled by vs_bench.flags. */
typedef struct vs_bench_plan {
    char out[VS_BENCH_PATH_MAX]; /* the default OUT (versus-results/NAME-<data>); --out replaces it */
    const char *data[2];         /* the data SPECs loaded for the run (training, test), or NULL */
    uint64_t seed;               /* the run's seed, recorded in the journal of a bench with items */
} vs_bench_plan;

/* What the common code hands a bench's run.  Everything is the caller's and outlives the run. */
typedef struct vs_bench_call {
    const vs_args *a;            /* the flags, parsed against the bench's opts */
    const char *out;             /* OUT: --out, or the plan's default */
    vs_dataset *data[2];         /* the plan's data sets, loaded with the data flags (NULL where none) */
    const char *command;         /* "versus bench NAME ..." stamped into the report */
    FILE *progress;              /* stderr: one line per stage */
    const vs_run_opts *run;      /* a bench with items: its journal's options (--shard, --resume); else NULL */
    vs_run **journal;            /* a bench with items: the run its experiment opened, finished once published */
} vs_bench_call;

/* A named budget of a bench: flags given before the user's (a flag the user gives wins), so that
 * `versus bench NAME --budget paper` runs the paper's settings and says which in its results.json. */
typedef struct vs_bench_budget {
    const char *name;         /* "quick", "paper" */
    const char *flags;        /* "--ig-steps 200 --explain 1000": words separated by single spaces */
    const char *about;        /* one line: what it is for, and where it falls short of the paper */
} vs_bench_budget;

/* One benchmark of `versus bench NAME`: bench/NAME/cli.c defines `const vs_bench vs_benchmark_NAME`
 * with its own flags, and bench/registry.c lists it with one line; `versus help bench [NAME]` and
 * `versus bench NAME --help` print its usage, manual and flags.  The common code (bench/common.c)
 * drives every bench the same way: parse argv against opts; flags(a, options, plan) turns them into
 * the bench's options (an object of options_size bytes, zeroed first) and the plan; OUT, the data
 * sets, the command line and, with items, the journal's options (--shard, --resume) are made; run
 * returns the report (NULL only for a shard: its journal is the result); the report is written to
 * OUT, printed, and "wrote OUT/<writes>" said; the journal is finished.  A bench with items writes
 * parts that `versus merge` joins (cli/cmd_merge.c checks a part's command against opts).  --budget
 * NAME, taken before the flags are parsed, puts that budget's flags before the user's; the report's
 * data records "budget" (NAME, or "default" without one).
 * perf is a program of its own: main, when set, replaces all of this. */
typedef struct vs_bench {
    const char *name;
    const char *summary;      /* one line: the paper and what is reproduced */
    const char *usage;        /* "versus bench NAME [--flag X] ..."; continuation lines indented */
    const char *help;         /* what it runs, reports and writes */
    const vs_cli_opt *opts;   /* its flags (parser and help) */
    const char *items;        /* the word for its items ("pairs") when they run through a journal, else NULL */
    const char *writes;       /* the files named by the "wrote OUT/..." line */
    size_t options_size;
    int (*flags)(const vs_args *a, void *options, vs_bench_plan *plan);   /* 0, or 2 after a usage message */
    vs_status (*run)(void *options, const vs_bench_call *c, vs_report **report, vs_error *err);
    int (*main)(int argc, char **argv); /* a program parsing its own flags (perf), or NULL */
    const vs_bench_budget *budgets;     /* its budgets, ended by a {NULL}; --budget NAME picks one */
} vs_bench;

/* The registry (bench/registry.c), in the order `versus help bench` lists it. */
int vs_bench_count(void);
const vs_bench *vs_bench_at(int i);                /* NULL outside [0, count) */
const vs_bench *vs_bench_find(const char *name);   /* NULL when unknown */

/* Budget NAME of b, or NULL when it has none of that name. */
const vs_bench_budget *vs_bench_budget_find(const vs_bench *b, const char *name);
/* The --budget flag every bench with budgets takes (for help and for merge's check of a part). */
extern const vs_cli_opt vs_bench_budget_flag;
/* Run benchmark b on argv[0..argc) (argv[0] is its name, kept in the command line): the steps above;
 * 0, 1 (bad data, failed run) or 2 (usage). */
int vs_bench_main(const vs_bench *b, int argc, char **argv);
/* "versus bench WORD..." with each word shell-quoted when needed (malloc'd; NULL when out of memory). */
char *vs_bench_command_line(int argc, char **argv);
/* versus-results/<bench>-<spec> with anything but [A-Za-z0-9._-] in spec turned into '-'. */
void vs_bench_default_out(const char *bench, const char *spec, char *out, size_t n);

#endif
