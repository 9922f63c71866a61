/* autograd/conv_phases.h - a stride-s conv whose kernel is a multiple of s as a stride-1 conv over the
 * s x s input phases stacked as channels, so that Winograd's stride-1 kernels take it.  Private to
 * ops_conv.c (the tests pick the stride-1 engine through vs_conv_phases_engine).
 *
 * With xpad the input padded by (ph, pw) and r = k / s per dim (dilation 1, groups 1):
 *   x'[n, (c,py,px), i, j] = xpad[n, c, i sh + py, j sw + px]     (py < sh, px < sw; i < oh + rh - 1)
 *   w'[o, (c,py,px), a, b] = w[o, c, a sh + py, b sw + px]          (a < rh, b < rw)
 *   conv2d(x, w) = conv_s1(x', w')  (valid),  conv_transpose2d = fold(conv_transpose_s1(gy, w')),
 *   conv2d_weight_grad(x, gy) = scatter(weight_grad_s1(x', gy))
 * The same multiply-adds as the strided conv (each tap of w meets each input it met before): the
 * map is exact, only the order of the sums changes. */
#ifndef VERSUS_AUTOGRAD_CONV_PHASES_H
#define VERSUS_AUTOGRAD_CONV_PHASES_H

#include <stdbool.h>
#include <stdint.h>

struct vs_conv_fast; /* autograd/conv_avx512.h */

/* The stride-1 kernels that run the stacked conv: Winograd (the default: its fewer multiply-adds
 * make the detour pay where it takes the stacked conv, i.e. kernels of 3 or 5 taps per phase), the
 * direct AVX-512 kernels (the same multiply-adds as the strided ones: for the tests), or none. */
typedef enum vs_phases_engine { VS_PHASES_WINOGRAD = 0, VS_PHASES_DIRECT, VS_PHASES_OFF } vs_phases_engine;
/* Use engine e from now (call it between ops, like vs_set_kernel_isa); returns the previous one. */
vs_phases_engine vs_conv_phases_engine(vs_phases_engine e);

/* Whether the engine takes g (a conv2d: flip unset, stride above 1 dividing the kernel - or for Winograd a
 * 5x5 or 7x7 of stride 2, padded with zero taps to 6x6 or 8x8 - dilation 1)
 * in each direction: its forward, its transpose (the input gradient) and its weight gradient. */
bool vs_conv_phases_forward_fits(const struct vs_conv_fast *g);
bool vs_conv_phases_transpose_fits(const struct vs_conv_fast *g);
bool vs_conv_phases_weight_grad_fits(const struct vs_conv_fast *g);

/* The stacked rows [*first, *end) that hold input places, for one dim: stacked row I of phase q < s is
 * row I s + q - pad of the input's len; the stride-1 conv reads rows [0, out + r - 1). */
void vs_conv_phases_span(int64_t len, int64_t r, int64_t s, int64_t pad, int64_t out, int64_t *first, int64_t *end);

/* y = bias (or 0) + conv2d(x, w); false when out of memory. */
bool vs_conv_phases_forward(const struct vs_conv_fast *g, const float *x, const float *w, const float *bias, float *y);
/* dx = bias (or 0) + conv_transpose2d(gy, w) of the conv2d g (dx [n,c,h,w], gy [n,o,oh,ow]); false
 * when out of memory. */
bool vs_conv_phases_transpose(const struct vs_conv_fast *g, const float *gy, const float *w, const float *bias, float *dx);
/* dw[o,c,ki,kj] (overwritten) = sum_{n,i,j} gy[n,o,i,j] xpad[n, c, i sh + ki, j sw + kj]; false when
 * out of memory. */
bool vs_conv_phases_weight_grad(const struct vs_conv_fast *g, const float *x, const float *gy, float *dw);

#endif
