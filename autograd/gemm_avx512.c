/* gemm_avx512.c - the AVX-512F SGEMM micro-kernels (6 x 32) and their cache blocking.
 * The same source as the AVX2 kernel (gemm_ukernel.h) at twice the width; gemm.c calls it only
 * when cpuid reports AVX-512F and xgetbv shows the OS saves the ZMM state. */
#include "autograd/gemm_kernel.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <string.h>

#include "autograd/conv_avx512_simd.h"

/* dst[c*ldd + r] = src[r*lds + c] for r < rows, c < cols: 16 rows x 16 columns per register transpose
 * (vs_columns_of), remainders under lane masks.  On full-width cores (Zen 5, 1 thread) against the
 * AVX2 8 x 8 one, through Winograd's channels-last copies: conv forwards 2-8% faster (32x96x10x10 ->
 * 64 k3 530 -> 489 us, CEM's 64x32x14x14 -> 64 k5 4.08 -> 3.91 ms), WGAN-GP's critic step 3.5%. */
__attribute__((target("avx512f"))) void vs_gemm_transpose_avx512(int64_t rows, int64_t cols, const float *src, int64_t lds,
                                                               float *dst, int64_t ldd)
{
    __m512 r[16];
    for (int64_t r0 = 0; r0 < rows; r0 += 16) {
        const int64_t valid = rows - r0 < 16 ? rows - r0 : 16;
        const __mmask16 m = (__mmask16)((1u << valid) - 1u);
        for (int64_t c = 0; c < cols; c += 16) {
            const int64_t nq = cols - c < 16 ? cols - c : 16;
            vs_columns_of(src + r0 * lds + c, lds, nq, valid, false, r);
            float *d = dst + c * ldd + r0;
            if (valid == 16) {
#pragma GCC unroll 16
                for (int k = 0; k < 16; k++)
                    if (k < nq) _mm512_storeu_ps(d + k * ldd, r[k]);
            } else {
#pragma GCC unroll 16
                for (int k = 0; k < 16; k++)
                    if (k < nq) _mm512_mask_storeu_ps(d + k * ldd, m, r[k]);
            }
        }
    }
}

/* Two instances of the same kernel, identical in their arithmetic (same FMAs in the same order, so
 * the same bits): they differ in how A's broadcast values reach the FMAs.
 *   split: vfmadd231ps m32{1to16}, the broadcast inside the FMA (one instruction per FMA pair
 *     fewer), for cores that run a zmm FMA as two ymm halves (Zen 4).  Written out because GCC
 *     keeps one vbroadcastss for the two FMAs of a row instead; the separate broadcasts cost 1-2%
 *     of the VAE's and DIP-VAE's products and of sgemm 1024 at 1 thread (Zen 4).
 *   wide: one vbroadcastss per row into a register, for cores with two full-width FMA pipes
 *     (Zen 5): there the embedded broadcast re-loads A for each of a row's two FMAs, 14 loads per
 *     12 FMAs, more than the two vector loads a cycle those cores sustain.  Measured at 1 thread
 *     on Zen 5, a packed 6 x 32 tile with B in L1, kc 64-256: 216-222 -> 257-266 GFLOP/s (peak
 *     264-273). */
/* fma: the narrow (ymm) step; aligned: a 32-byte shift of the kernel's loops by edits elsewhere in the
 * library moved products by 5-10% (conv_avx512.c's kernels measured it) */
#define UK_TARGET __attribute__((target("avx512f,fma"), aligned(64)))
#define UK_V __m512
#define UK_VL 16
#define UK_LOAD(p) _mm512_loadu_ps(p)
#define UK_STORE(p, v) _mm512_storeu_ps((p), (v))
#define UK_BCAST(p) _mm512_set1_ps(*(p))
#define UK_SET1(x) _mm512_set1_ps(x)
#define UK_ZERO() _mm512_setzero_ps()
#define UK_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define UK_MUL(a, b) _mm512_mul_ps((a), (b))
/* A tile of at most 8 columns runs on ymm: half the cost on Zen 4, the same on full-width cores. */
#define UK_NARROW_V __m256
#define UK_NARROW_VL 8
#define UK_NARROW_LOAD(p) _mm256_loadu_ps(p)
#define UK_NARROW_BCAST(p) _mm256_broadcast_ss(p)
#define UK_NARROW_ZERO() _mm256_setzero_ps()
#define UK_NARROW_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define UK_WIDEN(v) _mm512_zextps256_ps512(v)
#define UK_MASK_T __mmask16
#define UK_MASK(n) ((__mmask16)((1u << (n)) - 1u))
#define UK_LOAD_MASK(p, m) _mm512_maskz_loadu_ps((m), (p))
#define UK_STORE_MASK(p, m, v) _mm512_mask_storeu_ps((p), (m), (v))

#define UK_NAME gemm_ukernel_avx512
#define UK_NAME_PACKED gemm_ukernel_avx512_packed
#include "autograd/gemm_ukernel.h"
#undef UK_NAME
#undef UK_NAME_PACKED

__attribute__((target("avx512f"), always_inline)) static inline __m512 fma_bcast(const float *p, __m512 b, __m512 c)
{
    __asm__("vfmadd231ps %[a]%{1to16%}, %[b], %[c]" : [c] "+v"(c) : [b] "v"(b), [a] "m"(*p));
    return c;
}
#define UK_FMA_BCAST(p, b, c) fma_bcast((p), (b), (c))
#define UK_NAME gemm_ukernel_avx512_split
#define UK_NAME_PACKED gemm_ukernel_avx512_split_packed
#include "autograd/gemm_ukernel.h"

/* Skylake-X-class caches: a 128 x 32 sliver of B is 16 KiB of L1; a 240 x 128 block of A is
 * 120 KiB of a 1 MiB L2; a 128 x 3072 panel of B is 1.5 MiB of L3. */
#define AVX512_ARCH(name_, kernel_, packed_, transpose_)                                          \
    {                                                                                            \
        .name = name_, .mr = UK_MR, .nr = UK_NR, .mc = 240, .kc = 128, .kc_big = 256, .nc = 3072, \
        .kernel = kernel_, .kernel_packed = packed_, .transpose = transpose_,                    \
        .pack_transpose6 = vs_gemm_pack_transpose6_avx2, .thin = vs_gemm_thin_fma,               \
    }
const vs_gemm_arch vs_gemm_arch_avx512 =
    AVX512_ARCH("avx512", gemm_ukernel_avx512, gemm_ukernel_avx512_packed, vs_gemm_transpose_avx512);
/* Zen 4 keeps the AVX2 transpose (AVX-512F machines have AVX2): 16-row blocks measured no faster there */
const vs_gemm_arch vs_gemm_arch_avx512_split =
    AVX512_ARCH("avx512-split", gemm_ukernel_avx512_split, gemm_ukernel_avx512_split_packed, vs_gemm_transpose_avx2);
#endif
