/* gemm_avx2.c - the AVX2 + FMA SGEMM micro-kernel (6 x 16) and its cache blocking.
 * Compiled for every x86 build with per-function target attributes; gemm.c calls it only when
 * vs_kernel_isa() says the CPU has AVX2 and FMA. */
#include "autograd/gemm_kernel.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <string.h>

#define UK_NAME gemm_ukernel_avx2
#define UK_NAME_PACKED gemm_ukernel_avx2_packed
#define UK_TARGET __attribute__((target("avx2,fma"), aligned(64))) /* aligned: see gemm_avx512.c */
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

/* 8 rows x 8 k: x[r] holds row r's k..k+7; on return x[j] holds column k+j (rows 0..7). */
__attribute__((target("avx2,fma"))) static inline void transpose8(__m256 *x)
{
    const __m256 t0 = _mm256_unpacklo_ps(x[0], x[1]), t1 = _mm256_unpackhi_ps(x[0], x[1]);
    const __m256 t2 = _mm256_unpacklo_ps(x[2], x[3]), t3 = _mm256_unpackhi_ps(x[2], x[3]);
    const __m256 t4 = _mm256_unpacklo_ps(x[4], x[5]), t5 = _mm256_unpackhi_ps(x[4], x[5]);
    const __m256 t6 = _mm256_unpacklo_ps(x[6], x[7]), t7 = _mm256_unpackhi_ps(x[6], x[7]);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
    x[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    x[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    x[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    x[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    x[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    x[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    x[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    x[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/* dst[c*ldd + r] = src[r*lds + c] for r < rows, c < cols: 8 rows x 8 columns loaded, transposed in
 * registers and stored as 8 runs of 8 floats; the column remainder of each band of 8 rows, and the
 * last rows % 8 rows, element by element. */
__attribute__((target("avx2,fma"))) void vs_gemm_transpose_avx2(int64_t rows, int64_t cols, const float *src,
                                                                int64_t lds, float *dst, int64_t ldd)
{
    int64_t r0 = 0;
    for (; r0 + 8 <= rows; r0 += 8) {
        const float *s = src + r0 * lds;
        int64_t c = 0;
        for (; c + 8 <= cols; c += 8) {
            __m256 x[8];
            for (int r = 0; r < 8; r++) x[r] = _mm256_loadu_ps(s + r * lds + c);
            transpose8(x);
            float *d = dst + c * ldd + r0;
            for (int j = 0; j < 8; j++) _mm256_storeu_ps(d + j * ldd, x[j]);
        }
        for (; c < cols; c++)
            for (int64_t r = 0; r < 8; r++) dst[c * ldd + r0 + r] = s[r * lds + c];
    }
    for (; r0 < rows; r0++)
        for (int64_t c = 0; c < cols; c++) dst[c * ldd + r0] = src[r0 * lds + c];
}

/* The same for a 6-row sliver (the kernels' MR): dst[k*6 + r] = src[r*rs + k], r < 6.  Each row is
 * read along k (streaming) instead of six rows gathered per k, which stalls on cache misses when
 * the rows are 4 KiB apart.  Column k+j is stored as 8 floats at dst + (k+j)*6 in ascending order:
 * its two dummy lanes land on the start of column k+j+1, which the next store rewrites; the last
 * column of each 8 is stored masked, so nothing is written past the sliver. */
__attribute__((target("avx2,fma"))) void vs_gemm_pack_transpose6_avx2(float *dst, const float *src, int64_t rs,
                                                                      int64_t kc)
{
    const __m256i six = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, 0, 0);
    int64_t k = 0;
    for (; k + 8 <= kc; k += 8) {
        __m256 x[8];
        for (int r = 0; r < 6; r++) x[r] = _mm256_loadu_ps(src + r * rs + k);
        /* the next sliver's rows (A is packed sliver after sliver): ask for them while this one is
         * transposed - measured 2-3% of a 512 or 1024 product at one thread */
        for (int r = 0; r < 6; r++) _mm_prefetch((const char *)(src + (6 + r) * rs + k), _MM_HINT_T0);
        x[6] = x[7] = _mm256_setzero_ps();
        transpose8(x);
        float *d = dst + k * 6;
        for (int j = 0; j < 7; j++) _mm256_storeu_ps(d + j * 6, x[j]);
        _mm256_maskstore_ps(d + 7 * 6, six, x[7]);
    }
    for (; k < kc; k++)
        for (int64_t r = 0; r < 6; r++) dst[k * 6 + r] = src[r * rs + k];
}

/* Zen 3 / Haswell-class caches: a 256 x 16 sliver of B is 16 KiB of a 32 KiB L1; a 144 x 256
 * block of A is 144 KiB of a 512 KiB L2; a 256 x 4080 panel of B is 4 MiB of L3. */
const vs_gemm_arch vs_gemm_arch_avx2 = {
    .name = "avx2", .mr = UK_MR, .nr = UK_NR, .mc = 144, .kc = 256, .kc_big = 256, .nc = 4080, .kernel = UK_NAME,
    .kernel_packed = UK_NAME_PACKED,
    .transpose = vs_gemm_transpose_avx2, .thin = vs_gemm_thin_fma,
};
#endif
