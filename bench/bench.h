/* bench/bench.h - the benchmarks behind `versus bench`: each reproduces one paper's evaluation on
 * one data set and writes a report directory (bench/NAME/), or times the engine (bench/perf/).
 * Private to the program. */
#ifndef VERSUS_BENCH_BENCH_H
#define VERSUS_BENCH_BENCH_H

#include "cli/cli.h"

#include <stddef.h>

/* One benchmark of `versus bench NAME`: bench/NAME/cli.c defines `const vs_bench vs_benchmark_NAME`
 * with its own flags, and bench/registry.c lists it with one line; `versus help bench` prints the
 * table, every usage, and every benchmark's manual and flags.  run gets argc/argv, the words after
 * the verb (argv[0] is NAME, kept for the command line stamped into the report), and a, argv + 1
 * parsed against opts (NULL when opts is NULL: the benchmark parses argv + 1 itself).  It returns 0,
 * 1 (bad data, failed run) or 2 (usage). */
typedef struct vs_bench {
    const char *name;
    const char *summary;      /* one line: the paper and what is reproduced */
    const char *usage;        /* "versus bench NAME [--flag X] ..."; continuation lines indented */
    const char *help;         /* what it runs, reports and writes */
    const vs_cli_opt *opts;   /* its flags (parser and help), or NULL: parses its own */
    int (*run)(const vs_args *a, int argc, char **argv);
} vs_bench;

/* The registry (bench/registry.c), in the order `versus help bench` lists it. */
int vs_bench_count(void);
const vs_bench *vs_bench_at(int i);                /* NULL outside [0, count) */
const vs_bench *vs_bench_find(const char *name);   /* NULL when unknown */

/* "versus bench WORD..." with each word shell-quoted when needed (malloc'd; NULL when out of memory). */
char *vs_bench_command_line(int argc, char **argv);
/* bench/results/<bench>-<spec> with anything but [A-Za-z0-9._-] in spec turned into '-'. */
void vs_bench_default_out(const char *bench, const char *spec, char *out, size_t n);
/* OUT: --out, or the default above; rc (2 when --out is too long for n). */
int vs_bench_out(const vs_args *a, const char *bench, const char *spec, char *out, size_t n);
/* Write report r into the directory out, print its Markdown and "wrote out/what"; rc. */
struct vs_report;
int vs_bench_publish(const struct vs_report *r, const char *out, const char *what);

#endif
