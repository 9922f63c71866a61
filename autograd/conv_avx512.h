/* autograd/conv_avx512.h - AVX-512F direct convolution and weight gradient (an implicit GEMM: no im2col matrix) for
 * layers with many output channels.  Private to ops_conv.c, which falls back to im2col + GEMM
 * when vs_conv_avx512_fits says no (other instruction sets, groups, few channels, ragged tiles).
 *
 * Geometry (NCHW, groups 1, any stride, padding and dilation):
 *   y[n,o,i,j] = sum_{c,ki,kj} W(o,c,ki,kj) x[n, c, i sh + ki dh - ph, j sw + kj dw - pw]
 * with W(o,c,ki,kj) = w[o,c,ki,kj], or with flip set W(o,c,ki,kj) = w[c,o,kh-1-ki,kw-1-kj] (w is
 * then [c, o, kh, kw]: a stride-1 conv_transpose2d, i.e. a conv2d's input gradient, is this conv
 * with padding d (k - 1) - p).  Every output element is one sum over (ki, kj, c) in that order,
 * leaving out the taps that fall in the padding (they would add zeros), made by one thread:
 * results do not depend on the thread count. */
#ifndef VERSUS_AUTOGRAD_CONV_AVX512_H
#define VERSUS_AUTOGRAD_CONV_AVX512_H

#include <stdbool.h>
#include <stdint.h>

typedef struct vs_conv_fast {
    int64_t n, c, h, w; /* input */
    int64_t o, oh, ow;  /* output */
    int64_t kh, kw, sh, sw, ph, pw, dh, dw;
    bool flip; /* w is [c, o, kh, kw], used transposed and rotated by 180 degrees */
    int64_t y0, x0; /* output row i, column j is the conv's row i + y0, column j + x0 (the
                     * caller keeps every tap inside the padded input) */
} vs_conv_fast;

/* The outputs [*lo, *hi) of [0, n) whose tap lands on the input [0, len): i s + off in [0, len)
 * (off: the tap's k d - p, plus the conv's first row or column times s).  Empty: *lo = *hi. */
static inline void vs_conv_reach(int64_t n, int64_t s, int64_t off, int64_t len, int64_t *lo, int64_t *hi)
{
    const int64_t a = off >= 0 ? 0 : (s - 1 - off) / s, b = off > len - 1 ? 0 : (len - 1 - off) / s + 1;
    *lo = a < n ? a : n;
    *hi = b < *lo ? *lo : b < n ? b : n;
}

/* One strided row: d[m] = s[m sw + x0] on [lo, hi) (from vs_conv_reach), zeros elsewhere in [0, n).
 * Callers inline it with sw = 1 or 2 as a constant so that those loops vectorise. */
static inline void vs_conv_strided_row(float *restrict d, const float *restrict s, int64_t x0, int64_t sw, int64_t lo,
                                       int64_t hi, int64_t n)
{
    for (int64_t m = 0; m < lo; m++) d[m] = 0.0f;
    for (int64_t m = lo; m < hi; m++) d[m] = s[m * sw + x0];
    for (int64_t m = hi; m < n; m++) d[m] = 0.0f;
}

/* Whether g's sums are short (c kh kw < 256): then the im2col + GEMM path's copy and packing (per
 * multiply-add 1 / o of a copied float, 1 / (c kh kw) of a packed one) dominate, and the direct
 * kernels beat it at fewer useful lanes in their tiles (each caller's bars measured on the sweep
 * suite's rows, 1 thread: e.g. 8x17->64 k5 at use 0.64 runs at 78% of peak direct, 55% via GEMM;
 * 96x25->10 k1 at use 0.29, 15% against 9%; forwards of longer sums at use 0.18-0.57 ran 13-47%
 * slower direct). */
bool vs_conv_avx512_short_sums(const vs_conv_fast *g);

/* Cycles per multiply-add of a register tile of v weight vectors x p broadcast inputs on a full-width
 * AVX-512 core (two FMAs and at best two vector loads a cycle): max(v p, v + p) / (v p).  One
 * vector's tiles are bound by their loads there; both kernels' tile choices weigh by it. */
static inline double vs_avx512_tile_cycles(int64_t v, int64_t p)
{
    return v + p > v * p ? (double)(v + p) / (double)(v * p) : 1.0;
}
/* Whether the kernels run now (AVX-512 chosen, see vs_kernel_isa) and suit g's shape. */
bool vs_conv_avx512_fits(const vs_conv_fast *g);
/* y = (accumulate ? y : bias, or 0 without one) + conv(x, W); false when out of memory. */
bool vs_conv_avx512_forward(const vs_conv_fast *g, const float *x, const float *w, const float *bias, bool accumulate,
                            float *y);

/* Whether vs_conv_avx512_transpose runs now and takes g (a conv2d, flip unset, stride above 1). */
bool vs_conv_avx512_transpose_fits(const vs_conv_fast *g);
/* Whether the output phases of that transpose reach every place of dx (each reaches its own). */
bool vs_conv_avx512_transpose_covers(const vs_conv_fast *g);
/* dx = (accumulate ? dx : bias, or 0) + conv_transpose2d(gy, w) for the conv2d g (dx [n,c,h,w], gy
 * [n,o,oh,ow], w [o,c,kh,kw]), dilation 1: one stride-1 conv per output phase (i mod sh, j mod sw)
 * with the kernel's taps of that phase, flipped (without accumulate, the places no phase reaches
 * are left alone: see vs_conv_avx512_transpose_covers); false when out of memory. */
bool vs_conv_avx512_transpose(const vs_conv_fast *g, const float *gy, const float *w, const float *bias, bool accumulate,
                              float *dx);

/* Whether the weight-gradient kernels run now and suit g (flip unset). */
bool vs_conv_avx512_weight_grad_fits(const vs_conv_fast *g);
/* dw[o,c,ki,kj] (overwritten) = sum_{n,i,j} gy[n,o,i,j] x[n, c, i sh + ki dh - ph, j sw + kj dw - pw];
 * false when out of memory.  (conv_avx512_wgrad.c) */
bool vs_conv_avx512_weight_grad(const vs_conv_fast *g, const float *x, const float *gy, float *dw);

#endif
