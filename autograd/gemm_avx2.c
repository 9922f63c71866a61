/* gemm_avx2.c - the AVX2 + FMA SGEMM micro-kernel (6 x 16) and its cache blocking.
 * Compiled for every x86 build with per-function target attributes; gemm.c calls it only when
 * vs_kernel_isa() says the CPU has AVX2 and FMA. */
#include "autograd/gemm_kernel.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <string.h>

#define UK_NAME gemm_ukernel_avx2
#define UK_NAME_PACKED gemm_ukernel_avx2_packed
#define UK_TARGET __attribute__((target("avx2,fma")))
#define UK_V __m256
#define UK_VL 8
#define UK_LOAD(p) _mm256_loadu_ps(p)
#define UK_STORE(p, v) _mm256_storeu_ps((p), (v))
#define UK_BCAST(p) _mm256_broadcast_ss(p)
#define UK_SET1(x) _mm256_set1_ps(x)
#define UK_ZERO() _mm256_setzero_ps()
#define UK_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define UK_MUL(a, b) _mm256_mul_ps((a), (b))
#include "autograd/gemm_ukernel.h"

/* Zen 3 / Haswell-class caches: a 256 x 16 sliver of B is 16 KiB of a 32 KiB L1; a 144 x 256
 * block of A is 144 KiB of a 512 KiB L2; a 256 x 4080 panel of B is 4 MiB of L3. */
const vs_gemm_arch vs_gemm_arch_avx2 = {
    .name = "avx2", .mr = UK_MR, .nr = UK_NR, .mc = 144, .kc = 256, .nc = 4080, .kernel = UK_NAME,
    .kernel_packed = UK_NAME_PACKED,
};
#endif
