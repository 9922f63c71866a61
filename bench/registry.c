/* registry.c - every benchmark of `versus bench`, one line each: a paper's experiment (bench/NAME/) or
 * the engine's timings (bench/perf/).  A new paper's bench is its folder plus one line here. */
#include "bench/bench.h"

#include <string.h>

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
static const vs_bench *const benches[] = {BENCHES(ENTRY)};
#define N_BENCHES ((int)(sizeof benches / sizeof *benches))

int vs_bench_count(void) { return N_BENCHES; }

const vs_bench *vs_bench_at(int i) { return i >= 0 && i < N_BENCHES ? benches[i] : NULL; }

const vs_bench *vs_bench_find(const char *name)
{
    for (int i = 0; i < N_BENCHES; i++)
        if (strcmp(benches[i]->name, name) == 0) return benches[i];
    return NULL;
}
