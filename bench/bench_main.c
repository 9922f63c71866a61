/* bench_main.c - placeholder replaced by the benchmark suite (issue 4). */
#include "versus/versus.h"
#include <stdio.h>
int main(void) { printf("versus %s bench\n", vs_version()); return 0; }
