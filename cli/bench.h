/* cli/bench.h - the benchmarks behind `versus bench`: each reproduces one paper's evaluation on
 * one data set and writes a report directory.  Private to the program. */
#ifndef VERSUS_CLI_BENCH_H
#define VERSUS_CLI_BENCH_H

#include "cli/cli.h"

/* `versus bench snx`: Tables II-III and Figs. 3-7 of the SNX paper (cli/bench_snx.c).  a holds the
 * parsed flags of `bench`; argc/argv the words after the verb, for the command line in the report.
 * Returns 0, 1 (bad data, failed run) or 2 (usage). */
int vs_bench_snx(const vs_args *a, int argc, char **argv);
/* `versus bench svae`: Table 1 and Figs. 2-7 of the SVAE paper (cli/bench_svae.c).  argv[0] is "svae";
 * it parses its own flags.  The same return codes. */
int vs_bench_svae(int argc, char **argv);
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
