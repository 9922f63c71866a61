/* autograd/conv_direct.h - direct convolution kernels for layers with very few output channels
 * (a generator's or decoder's last conv: 32 -> 1 or 3 channels, 7 x 7).  There im2col + GEMM
 * wastes most of the 6-row micro-tile and streams an im2col matrix as large as the work, so
 * these loops read zero-padded input planes instead.  Private to ops_conv.c.
 *
 * Geometry as conv2d sees it (NCHW, groups 1, stride 1, any padding and dilation):
 *   y[n,o,i,j] = bias[o] + sum_{c,ki,kj} w[o,c,ki,kj] x[n, c, i + ki dh - ph, j + kj dw - pw]
 * Every output element is summed by one thread in a fixed order: results do not depend on the
 * thread count. */
#ifndef VERSUS_AUTOGRAD_CONV_DIRECT_H
#define VERSUS_AUTOGRAD_CONV_DIRECT_H

#include <stdbool.h>
#include <stdint.h>

typedef struct vs_conv_direct {
    int64_t n, c, h, w;  /* batch; image side: conv2d input, conv_transpose2d output */
    int64_t o, oh, ow;   /* patch side: conv2d output, conv_transpose2d input */
    int64_t kh, kw, ph, pw, dh, dw;
} vs_conv_direct;

/* Most output channels the direct kernels take (above, im2col + GEMM is faster). */
#define VS_CONV_DIRECT_MAX_O 4

/* y = conv2d(x, w) + bias (bias may be NULL); y is overwritten. */
bool vs_conv_direct_forward(const vs_conv_direct *g, const float *x, const float *w, const float *bias, float *y);
/* x += conv_transpose2d(y, w): the adjoint of the forward in its input. */
bool vs_conv_direct_transpose(const vs_conv_direct *g, const float *y, const float *w, float *x);
/* dw = the weight gradient for input x and output gradient gy (overwritten). */
bool vs_conv_direct_weight_grad(const vs_conv_direct *g, const float *x, const float *gy, float *dw);

#endif
