/* autograd/conv_avx512_simd.h - 16 x 16 register transposes shared by the AVX-512F convolution
 * kernels (conv_avx512.c, conv_avx512_wgrad.c) and the AVX-512 GEMM's transpose (gemm_avx512.c): the
 * layout changes between NCHW planes and the channel-blocked copies the tiles read.  Private; x86-64 GCC/Clang only (include it inside the
 * kernels' #if). */
#ifndef VERSUS_AUTOGRAD_CONV_AVX512_SIMD_H
#define VERSUS_AUTOGRAD_CONV_AVX512_SIMD_H

#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>

#define VS_AVX512_INLINE static inline __attribute__((always_inline, target("avx512f")))

/* r[i] lane m = r[m] lane i on return: a 16 x 16 transpose in 64 shuffles, so that a tile leaves
 * its sums channel by channel and its stores into the output rows are vector stores (pixel by
 * pixel from a pixel-major tile, they cost 10% of the tile time with 196 taps). */
VS_AVX512_INLINE void vs_transpose16(__m512 r[16])
{
    __m512 t[16];
#pragma GCC unroll 16
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    /* then r[4 i + j], 128-bit lane k = column 4 k + j of rows 4 i .. 4 i + 3 */
#pragma GCC unroll 16
    for (int i = 0; i < 4; i++) {
        const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
        const __m512d c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);
        r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
        r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
        r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
        r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
    /* column 4 k + j = lane k of r[j], r[4 + j], r[8 + j], r[12 + j] */
#pragma GCC unroll 16
    for (int j = 0; j < 4; j++) {
        const __m512 s0 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x44), s1 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xee);
        const __m512 s2 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x44), s3 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xee);
        t[j] = _mm512_shuffle_f32x4(s0, s2, 0x88);
        t[4 + j] = _mm512_shuffle_f32x4(s0, s2, 0xdd);
        t[8 + j] = _mm512_shuffle_f32x4(s1, s3, 0x88);
        t[12 + j] = _mm512_shuffle_f32x4(s1, s3, 0xdd);
    }
#pragma GCC unroll 16
    for (int m = 0; m < 16; m++) r[m] = t[m];
}

/* Columns [0, n) (n <= 16) of the rows < valid of a 16-row block starting at src, rows stride
 * floats apart, reversed when rev, as 16 vectors dst[k][lane i] = row i's column k: a 16 x 16
 * transpose from plain row loads (the hardware prefetches those; gathers do not). */
VS_AVX512_INLINE void vs_columns_of(const float *src, int64_t stride, int64_t n, int64_t valid, bool rev, __m512 r[16])
{
    const __mmask16 m = (__mmask16)((1u << n) - 1);
    const __m512i back = _mm512_sub_epi32(_mm512_set1_epi32((int)n - 1),
                                          _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++) {
        r[i] = i < valid ? _mm512_maskz_loadu_ps(m, src + i * stride) : _mm512_setzero_ps();
        if (rev) r[i] = _mm512_permutexvar_ps(back, r[i]); /* lane k = column n - 1 - k */
    }
    vs_transpose16(r);
}

#endif
