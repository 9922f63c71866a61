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

/* dst[k*w + r] = src[r*rs + k]: 8 rows x 8 k loaded, transposed in registers, stored as 8 runs of
 * 8 packed floats; the k remainder element by element. */
__attribute__((target("avx2,fma"))) void vs_gemm_pack_transpose_avx2(float *dst, const float *src, int64_t rs,
                                                                     int64_t w, int64_t kc)
{
    for (int64_t r0 = 0; r0 < w; r0 += 8) {
        const float *s = src + r0 * rs;
        int64_t k = 0;
        for (; k + 8 <= kc; k += 8) {
            const __m256 x0 = _mm256_loadu_ps(s + k), x1 = _mm256_loadu_ps(s + rs + k);
            const __m256 x2 = _mm256_loadu_ps(s + 2 * rs + k), x3 = _mm256_loadu_ps(s + 3 * rs + k);
            const __m256 x4 = _mm256_loadu_ps(s + 4 * rs + k), x5 = _mm256_loadu_ps(s + 5 * rs + k);
            const __m256 x6 = _mm256_loadu_ps(s + 6 * rs + k), x7 = _mm256_loadu_ps(s + 7 * rs + k);
            const __m256 t0 = _mm256_unpacklo_ps(x0, x1), t1 = _mm256_unpackhi_ps(x0, x1);
            const __m256 t2 = _mm256_unpacklo_ps(x2, x3), t3 = _mm256_unpackhi_ps(x2, x3);
            const __m256 t4 = _mm256_unpacklo_ps(x4, x5), t5 = _mm256_unpackhi_ps(x4, x5);
            const __m256 t6 = _mm256_unpacklo_ps(x6, x7), t7 = _mm256_unpackhi_ps(x6, x7);
            const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
            const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
            const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
            const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
            float *d = dst + k * w + r0;
            _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
            _mm256_storeu_ps(d + w, _mm256_permute2f128_ps(u1, u5, 0x20));
            _mm256_storeu_ps(d + 2 * w, _mm256_permute2f128_ps(u2, u6, 0x20));
            _mm256_storeu_ps(d + 3 * w, _mm256_permute2f128_ps(u3, u7, 0x20));
            _mm256_storeu_ps(d + 4 * w, _mm256_permute2f128_ps(u0, u4, 0x31));
            _mm256_storeu_ps(d + 5 * w, _mm256_permute2f128_ps(u1, u5, 0x31));
            _mm256_storeu_ps(d + 6 * w, _mm256_permute2f128_ps(u2, u6, 0x31));
            _mm256_storeu_ps(d + 7 * w, _mm256_permute2f128_ps(u3, u7, 0x31));
        }
        for (; k < kc; k++)
            for (int64_t r = 0; r < 8; r++) dst[k * w + r0 + r] = s[r * rs + k];
    }
}

/* Zen 3 / Haswell-class caches: a 256 x 16 sliver of B is 16 KiB of a 32 KiB L1; a 144 x 256
 * block of A is 144 KiB of a 512 KiB L2; a 256 x 4080 panel of B is 4 MiB of L3. */
const vs_gemm_arch vs_gemm_arch_avx2 = {
    .name = "avx2", .mr = UK_MR, .nr = UK_NR, .mc = 144, .kc = 256, .nc = 4080, .kernel = UK_NAME,
    .kernel_packed = UK_NAME_PACKED,
    .pack_transpose = vs_gemm_pack_transpose_avx2,
};
#endif
