/* bench/perf/peak.c - the machine's single-precision FMA peak: independent multiply-add chains
 * in the widest vectors the kernels use, on one thread or on every thread at once.  The percent
 * of peak that other workloads report is against this number. */
#include "bench/perf/perf.h"
#include "autograd/kernels.h"

#include <stdlib.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

/* Multiply-adds per chain per call; ten chains (named a0..a9 below). */
#define PEAK_ITERS 200000
#define PEAK_CHAINS 10

static volatile float peak_sink;

/* acc = acc * x + y converges to y / (1 - x): no overflow, no subnormals.  Each chain starts from
 * its own value: ten chains that start alike are one computation, and the compiler merges them
 * into a single chain (the "peak" was then ten times one FMA's latency-bound rate). */
#define PEAK_BODY(V, FMA, SET1, ADD, ZERO, REDUCE)                                                \
    const V x = SET1(0.999f), y = SET1(1e-3f);                                                     \
    V a0 = ZERO, a1 = SET1(0.1f), a2 = SET1(0.2f), a3 = SET1(0.3f), a4 = SET1(0.4f);               \
    V a5 = SET1(0.5f), a6 = SET1(0.6f), a7 = SET1(0.7f), a8 = SET1(0.8f), a9 = SET1(0.9f);         \
    for (long i = 0; i < PEAK_ITERS; i++) {                                                        \
        a0 = FMA(a0, x, y); a1 = FMA(a1, x, y); a2 = FMA(a2, x, y); a3 = FMA(a3, x, y);            \
        a4 = FMA(a4, x, y); a5 = FMA(a5, x, y); a6 = FMA(a6, x, y); a7 = FMA(a7, x, y);            \
        a8 = FMA(a8, x, y); a9 = FMA(a9, x, y);                                                    \
    }                                                                                              \
    const V s = ADD(ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7))), ADD(a8, a9)); \
    peak_sink = REDUCE(s)

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2,fma"))) static void peak_avx2(void)
{
    PEAK_BODY(__m256, _mm256_fmadd_ps, _mm256_set1_ps, _mm256_add_ps, _mm256_setzero_ps(), _mm256_cvtss_f32);
}

__attribute__((target("avx512f"))) static void peak_avx512(void)
{
    PEAK_BODY(__m512, _mm512_fmadd_ps, _mm512_set1_ps, _mm512_add_ps, _mm512_setzero_ps(), _mm512_cvtss_f32);
}
#endif

static float scalar_fma(float a, float b, float c) { return a * b + c; }
static float scalar_add(float a, float b) { return a + b; }
static float scalar_set1(float a) { return a; }
static float scalar_id(float a) { return a; }

static void peak_scalar(void) { PEAK_BODY(float, scalar_fma, scalar_set1, scalar_add, 0.0f, scalar_id); }

typedef struct peak_state {
    void (*fn)(void);
    int threads;
} peak_state;

static int peak_lanes(vs_isa isa) { return isa == VS_ISA_AVX512 ? 16 : isa == VS_ISA_AVX2 ? 8 : 1; }

static void *peak_setup(const vs_bench_case *c, int threads)
{
    (void)c;
    peak_state *s = malloc(sizeof *s);
    if (!s) return NULL;
    s->threads = threads;
    s->fn = peak_scalar;
#if defined(__x86_64__) || defined(__i386__)
    if (vs_kernel_isa() == VS_ISA_AVX512) s->fn = peak_avx512;
    if (vs_kernel_isa() == VS_ISA_AVX2) s->fn = peak_avx2;
#endif
    return s;
}

static void peak_chunk(void *ctx, int64_t begin, int64_t end)
{
    const peak_state *s = ctx;
    for (int64_t i = begin; i < end; i++) s->fn();
}

/* Four loop bodies per thread, handed out dynamically, so every thread is busy throughout. */
static void peak_run(void *state)
{
    peak_state *s = state;
    vs_parallel_for(4 * (int64_t)s->threads, 1, peak_chunk, s);
}

static double peak_flops(const vs_bench_case *c, int threads)
{
    (void)c;
    return 4.0 * threads * PEAK_ITERS * PEAK_CHAINS * 2.0 * peak_lanes(vs_kernel_isa());
}

const vs_bench_case vs_bench_peak_cases[] = {
    {.suite = "peak", .name = "peak_fma", .about = "FMA throughput, 10 independent chains per thread",
     .setup = peak_setup, .run = peak_run, .teardown = free, .flops = peak_flops},
};
const size_t vs_bench_peak_count = sizeof vs_bench_peak_cases / sizeof vs_bench_peak_cases[0];
