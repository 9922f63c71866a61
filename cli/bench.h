/* cli/bench.h - the benchmarks behind `versus bench`: each reproduces one paper's evaluation on
 * one data set and writes a report directory.  Private to the program. */
#ifndef VERSUS_CLI_BENCH_H
#define VERSUS_CLI_BENCH_H

#include "cli/cli.h"

/* `versus bench snx`: Tables II-III and Figs. 3-7 of the SNX paper (cli/bench_snx.c).  a holds the
 * parsed flags of `bench`; argc/argv the words after the verb, for the command line in the report.
 * Returns 0, 1 (bad data, failed run) or 2 (usage). */
int vs_bench_snx(const vs_args *a, int argc, char **argv);
/* `versus bench ganmex`: the GANMEX paper's Tables 1-2 and Figs. 2-3 (cli/bench_ganmex.c), parsing its
 * own flags from argv (the words after the verb). */
int vs_bench_ganmex(int argc, char **argv);
/* "versus bench WORDS...", each word shell-quoted when needed (malloc'd; NULL when out of memory). */
char *vs_bench_command_line(int argc, char **argv);

#endif
