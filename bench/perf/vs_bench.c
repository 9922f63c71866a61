/* bench/perf/vs_bench.c - the vs_bench program of `make bench`: vs_bench_perf (main.c) on its own. */
#include "bench/perf/perf.h"

int main(int argc, char **argv) { return vs_bench_perf("vs_bench", argc, argv); }
